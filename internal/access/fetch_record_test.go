package access_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestFetchRecordsTheBody: a fetch keeps what the robots.txt archive
// needs: the octets read and their SHA-256, when, the final URL, and four
// response fields; fetches without a body keep none.
func TestFetchRecordsTheBody(t *testing.T) {
	long := strings.Repeat("# filler line\n", (600<<10)/14) // past the 500 KiB parse limit
	limit := robots.Options{MaxBytes: 500 << 10}.Limit()
	for _, tt := range []struct {
		name   string
		h      http.Handler
		result policy.AccessResult
		body   string // the octets hashed; "" with noBody
		noBody bool
		final  string // path of the final URL
		header http.Header
	}{
		{"200", serve(200, stdRobots, "Content-Type", "text/plain; charset=utf-8", "ETag", `"abc"`, "Last-Modified", "Sun, 22 Nov 2026 20:00:00 GMT", "Cache-Control", "max-age=60", "X-Other", "x"),
			policy.Successful, stdRobots, false, "/robots.txt",
			http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Etag": {`"abc"`}, "Last-Modified": {"Sun, 22 Nov 2026 20:00:00 GMT"}, "Cache-Control": {"max-age=60"}}},
		{"redirected", redirects(2, stdRobots), policy.Successful, stdRobots, false, "/hop2", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
		{"empty 200", serve(200, "", "Content-Type", "text/plain"), policy.Successful, "", false, "/robots.txt", http.Header{"Content-Type": {"text/plain"}}},
		{"past the parse limit: the octets read", serve(200, long), policy.Successful, long[:limit+1], false, "/robots.txt", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
		{"404", serve(404, "not here", "Content-Type", "text/html"), policy.Unavailable, "", true, "/robots.txt", http.Header{"Content-Type": {"text/html"}}},
		{"500", serve(500, "oops"), policy.Unreachable, "", true, "/robots.txt", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t, tt.h)
			before := time.Now()
			a := accesstest.NewFetcher(access.FetcherOptions{Parse: robots.Options{MaxBytes: 500 << 10}}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Result != tt.result {
				t.Fatalf("Result: got %s, want %s (%v)", a.Result, tt.result, a.Err)
			}
			if a.HasBody() == tt.noBody {
				t.Errorf("HasBody: got %v, want %v", a.HasBody(), !tt.noBody)
			}
			if tt.noBody {
				if a.Raw != nil || a.SHA256 != [32]byte{} {
					t.Errorf("got Raw %q and SHA256 %x, want none", a.Raw, a.SHA256)
				}
			} else if !bytes.Equal(a.Raw, []byte(tt.body)) || a.SHA256 != sha256.Sum256([]byte(tt.body)) {
				t.Errorf("got Raw of %d octets, SHA256 %x, want the %d octets read and their hash", len(a.Raw), a.SHA256, len(tt.body))
			}
			if a.FetchedAt.Before(before) || a.FetchedAt.After(time.Now()) {
				t.Errorf("FetchedAt: got %v, want between %v and now", a.FetchedAt, before)
			}
			if want := o.URL + tt.final; a.FinalURL != want || a.URL != o.URL+"/robots.txt" {
				t.Errorf("URL, FinalURL: got %s, %s, want %s/robots.txt, %s", a.URL, a.FinalURL, o.URL, want)
			}
			if !headerEqual(a.Header, tt.header) {
				t.Errorf("Header: got %v, want %v", a.Header, tt.header)
			}
		})
	}
	// No response: no header, no body.
	a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", "127.0.0.1:1")
	if a.Result != policy.Unreachable || a.Header != nil || a.HasBody() || a.FetchedAt.IsZero() {
		t.Errorf("refused connection: got %s, header %v, body %v, fetched at %v; want unreachable, none, none, set", a.Result, a.Header, a.HasBody(), a.FetchedAt)
	}
}

func headerEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if strings.Join(a[k], "\x00") != strings.Join(v, "\x00") {
			return false
		}
	}
	return true
}
