package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/elazarl/goproxy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// memRT answers every request with a 100-octet page from memory.
type memRT struct{ body []byte }

func (m memRT) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{"Content-Type": {"text/html"}, "Content-Length": {strconv.Itoa(len(m.body))}}
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: io.NopCloser(bytes.NewReader(m.body)), ContentLength: int64(len(m.body)), Request: r}, nil
}

// BenchmarkServeHTTP measures the proxy's handler alone: no sockets, the
// origin answered from memory, one goroutine. "robotsproxy" is the audit
// writer as configured by default (chained, refusing while writes fail);
// "robotsproxy-checkpoints" adds a checkpoint log at its defaults;
// "robotsproxy-signing" signs every request (Web Bot Auth, package
// signing): compare it with "robotsproxy" for the CPU signing costs.
func BenchmarkServeHTTP(b *testing.B) {
	for _, kind := range []string{"bare", "robotsproxy", "robotsproxy-checkpoints", "robotsproxy-discard", "robotsproxy-nochain", "robotsproxy-signing"} {
		b.Run("proxy="+kind, func(b *testing.B) {
			o := benchOrigin(b, false)
			tr := proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true})
			tr.RegisterProtocol("http", memRT{body: bytes.Repeat([]byte("x"), 100)})
			var h http.Handler
			if kind == "bare" {
				gp := goproxy.NewProxyHttpServer()
				gp.Tr = tr
				gp.KeepAcceptEncoding = true
				h = gp
			} else {
				fetcher := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
				cache := access.NewCache(fetcher.Fetch, access.CacheOptions{})
				metrics := proxy.NewMetrics(prometheus.NewRegistry(), cache.Len)
				pol := policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: cache})
				var log io.Writer = io.Discard
				if kind != "robotsproxy-discard" {
					f, prev, err := audit.OpenFile(audit.FileOptions{Path: filepath.Join(b.TempDir(), "audit.log")})
					if err != nil {
						b.Fatal(err)
					}
					o := audit.Options{Chain: kind != "robotsproxy-nochain", Prev: prev, OnWriteError: "refuse"}
					if kind == "robotsproxy-checkpoints" {
						if o.Checkpoints, err = audit.OpenCheckpoints(audit.CheckpointOptions{
							Path: filepath.Join(b.TempDir(), "checkpoints")}); err != nil {
							b.Fatal(err)
						}
					}
					w := audit.NewWriter(f, o)
					b.Cleanup(func() { w.Close() })
					log = w
				}
				u, _ := url.Parse(o.URL)
				scheme, auth, _ := policy.Authority(u.Scheme, u.Host)
				cache.Get(context.Background(), scheme, auth)
				opts := proxy.Options{Policy: pol, Transport: tr, Audit: log, Metrics: metrics}
				if kind == "robotsproxy-signing" {
					opts.Egress = benchSigner(b, tr)
				}
				h = proxy.New(opts)
			}
			target := o.URL + "/size/100"
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("GET", target, nil)
				r.Header.Set("User-Agent", benchUA)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
