package signing

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress"
)

// BenchmarkSign is the CPU one signed request costs: the Transport
// selecting the key and signing a GET with a query (clone, nonce,
// signature base, Ed25519), the end of the chain answering at once.
// BenchmarkEd25519 is ed25519.Sign alone over a base of the same size,
// the floor no signer can go under; "post" adds a 1 KiB body and its
// Content-Digest.
func BenchmarkSign(b *testing.B) {
	agent := newAgent(b)
	tr := NewTransport(&capture{}, &Settings{Agents: egress.Table[*Agent]{Default: &agent}})
	x := &egress.Exchange{Identity: egress.Identity{Token: "ExampleBot"}}
	ctx := egress.NewContext(context.Background(), x)
	for _, c := range []struct{ name, method, body string }{{"get", "GET", ""}, {"post", "POST", strings.Repeat("b", 1024)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var body *strings.Reader
				req, _ := http.NewRequestWithContext(ctx, c.method, "http://www.example.com/articles/2026/page.html?id=42&lang=en", nil)
				if c.body != "" {
					body = strings.NewReader(c.body)
					req.Body, req.ContentLength = http.NoBody, int64(len(c.body))
					req.Body = nopCloser{body}
				}
				req.Header.Set("User-Agent", "ExampleBot/1.0")
				if _, err := tr.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func BenchmarkEd25519(b *testing.B) {
	agent := newAgent(b)
	base := []byte(strings.Repeat("x", 400))
	b.ReportAllocs()
	for b.Loop() {
		ed25519.Sign(agent.Active.Private, base)
	}
}
