package proxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// benchBody is the origin's response: a typical small page.
var benchBody = strings.Repeat("x", 4096)

// benchRobots is a realistic robots.txt: a star group and a crawler group
// with a few dozen rules.
func benchRobots() string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; i < 30; i++ {
		b.WriteString("Disallow: /private" + strings.Repeat("x", i) + "/\n")
	}
	b.WriteString("Disallow: /*.pdf$\nAllow: /private/public\n\nUser-agent: ExampleBot\nDisallow: /nope/\n")
	return b.String()
}

// runThroughput sends b.N GET requests in parallel through the proxy at
// proxyURL and reports requests per second.
func runThroughput(b *testing.B, proxyURL, target string) {
	pu, _ := url.Parse(proxyURL)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 256, MaxIdleConns: 256}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetBytes(int64(len(benchBody)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", target, nil)
			req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchOrigin(b *testing.B) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, benchRobots())
			return
		}
		_, _ = io.WriteString(w, benchBody)
	}))
	b.Cleanup(o.Close)
	return o
}

// BenchmarkThroughput compares allowed-path throughput of a bare goproxy
// with robotsproxy's enforcing proxy, both with the same outbound
// transport. Compare the two with benchstat:
//
//	go test -run '^$' -bench Throughput -count 10 ./proxy/ | tee /tmp/tp.txt
//	benchstat -col /proxy /tmp/tp.txt
func BenchmarkThroughput(b *testing.B) {
	guard := &netguard.Guard{AllowPrivate: true}
	b.Run("proxy=bare", func(b *testing.B) {
		o := benchOrigin(b)
		gp := goproxy.NewProxyHttpServer()
		gp.Tr = proxy.NewTransport(guard, proxy.TransportOptions{})
		gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
		gp.KeepAcceptEncoding = true
		srv := httptest.NewServer(gp)
		defer srv.Close()
		runThroughput(b, srv.URL, o.URL+"/page/allowed.html")
	})
	b.Run("proxy=robotsproxy", func(b *testing.B) {
		o := benchOrigin(b)
		fetcher := policy.NewFetcher(policy.FetcherOptions{Guard: guard})
		cache := policy.NewCache(fetcher.Fetch, policy.CacheOptions{})
		pol := policy.New(policy.Options{Identifier: policy.NewIdentifier(policy.DefaultBrowserTokens(), nil), Cache: cache})
		p := proxy.New(proxy.Options{
			Policy:    pol,
			Transport: proxy.NewTransport(guard, proxy.TransportOptions{}),
			Audit:     proxy.NewAuditLogger(io.Discard),
		})
		srv := httptest.NewServer(p)
		defer srv.Close()
		// Warm the robots.txt cache: the benchmark measures the hot path.
		scheme, auth, _ := policy.Authority("http", strings.TrimPrefix(o.URL, "http://"))
		cache.Get(context.Background(), scheme, auth)
		runThroughput(b, srv.URL, o.URL+"/page/allowed.html")
	})
}

// BenchmarkDecide measures the enforcement hook alone on a warm cache.
func BenchmarkDecide(b *testing.B) {
	o := benchOrigin(b)
	guard := &netguard.Guard{AllowPrivate: true}
	fetcher := policy.NewFetcher(policy.FetcherOptions{Guard: guard})
	pol := policy.New(policy.Options{
		Identifier: policy.NewIdentifier(policy.DefaultBrowserTokens(), nil),
		Cache:      policy.NewCache(fetcher.Fetch, policy.CacheOptions{}),
	})
	req := policy.Request{
		Scheme: "http", Host: strings.TrimPrefix(o.URL, "http://"), Path: "/page/allowed.html",
		UserAgent: "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)",
	}
	pol.Decide(context.Background(), req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := pol.Decide(context.Background(), req); !d.Allowed {
			b.Fatal("denied")
		}
	}
}
