package proxy_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// benchUA is the benchmarks' crawler: its own group applies.
const benchUA = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"

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

// benchOrigin serves benchRobots at /robots.txt and, at /size/N, a body of
// N octets (testkit.NewSizedOrigin).
func benchOrigin(b *testing.B, tlsOrigin bool) *httptest.Server {
	return testkit.NewSizedOrigin(b, benchRobots(), tlsOrigin).Server
}

// benchProxy is a proxy under benchmark, listening on URL.
type benchProxy struct {
	URL    string
	audit  *audit.Writer // nil for bare goproxy
	caPool *tls.Config   // the client's TLS configuration for intercepted tunnels
}

// newBenchProxy starts bare goproxy or robotsproxy (kind) in front of
// origin, both with proxy.NewTransport. robotsproxy is assembled as the
// server does: metrics, and the audit log in a real file through
// audit.Writer with the hash chain on (the defaults). With intercept both
// intercept CONNECT tunnels with a fresh CA.
func newBenchProxy(b *testing.B, kind string, origin *httptest.Server, intercept bool) *benchProxy {
	guard := &netguard.Guard{AllowPrivate: true}
	var upstream *tls.Config
	if origin.TLS != nil {
		upstream = origin.Client().Transport.(*http.Transport).TLSClientConfig
	}
	tr := proxy.NewTransport(proxy.TransportOptions{AllowPrivate: guard.AllowPrivate, AllowPrivateRanges: guard.Allow, TLS: upstream})
	bp := &benchProxy{}
	var mitmConfig func(string, *goproxy.ProxyCtx) (*tls.Config, error)
	if intercept {
		ca, err := mitm.NewCA(mitm.CAOptions{})
		if err != nil {
			b.Fatal(err)
		}
		certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
		if err != nil {
			b.Fatal(err)
		}
		mitmConfig, bp.caPool = certs.TLSConfig, &tls.Config{RootCAs: ca.CertPool()}
	}
	var h http.Handler
	switch kind {
	case "bare":
		gp := goproxy.NewProxyHttpServer()
		gp.Tr = tr
		gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
		gp.KeepAcceptEncoding = true
		if intercept {
			gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
				return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: mitmConfig}, host
			})
		}
		h = gp
	case "robotsproxy", "robotsproxy-nochain", "robotsproxy-discard", "robotsproxy-signing":
		h = newBenchRobotsproxy(b, kind, bp, tr, origin, mitmConfig)
	default:
		b.Fatalf("unknown proxy %q", kind)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	bp.URL = srv.URL
	return bp
}

// newBenchRobotsproxy assembles robotsproxy; kind robotsproxy-nochain
// writes the audit log without the hash chain, robotsproxy-discard
// encodes audit lines and discards them (to show what the log costs),
// robotsproxy-signing is robotsproxy signing every request (Web Bot Auth).
func newBenchRobotsproxy(b *testing.B, kind string, bp *benchProxy, tr *http.Transport, origin *httptest.Server,
	intercept func(string, *goproxy.ProxyCtx) (*tls.Config, error)) http.Handler {
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}, TLS: tr.TLSClientConfig})
	var metrics *proxy.Metrics
	cache := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		a := fetcher.Fetch(ctx, scheme, authority)
		metrics.ObserveFetch(a)
		return a
	}, access.CacheOptions{})
	metrics = proxy.NewMetrics(prometheus.NewRegistry(), cache.Len)
	u, _ := url.Parse(origin.URL)
	port, _ := strconv.Atoi(u.Port())
	pol := policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache: cache, ConnectPorts: []int{port}})
	var log io.Writer = io.Discard
	if kind != "robotsproxy-discard" {
		f, prev, err := audit.OpenFile(audit.FileOptions{Path: filepath.Join(b.TempDir(), "audit.log")})
		if err != nil {
			b.Fatal(err)
		}
		bp.audit = audit.NewWriter(f, audit.Options{Chain: kind == "robotsproxy" || kind == "robotsproxy-signing", Prev: prev})
		b.Cleanup(func() { bp.audit.Close() })
		log = bp.audit
	}
	// Warm the robots.txt cache: the benchmark measures the hot path.
	scheme, auth, _ := policy.Authority(u.Scheme, u.Host)
	cache.Get(context.Background(), scheme, auth)
	opts := proxy.Options{Policy: pol, Transport: tr, Audit: log,
		Metrics: metrics, Intercept: intercept}
	if kind == "robotsproxy-signing" {
		opts.Egress = benchSigner(b, tr)
	}
	return proxy.New(opts)
}

// runThroughput sends b.N GET requests for target through bp from 32
// concurrent connections and reports requests per second, and for
// robotsproxy the audit lines per write(2).
func runThroughput(b *testing.B, bp *benchProxy, target string, size, wantStatus int) {
	pu, _ := url.Parse(bp.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 64, MaxIdleConns: 64,
		TLSClientConfig: bp.caPool}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	do := func() error {
		req, _ := http.NewRequest("GET", target, nil)
		req.Header.Set("User-Agent", benchUA)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantStatus {
			b.Errorf("%s: got status %d, want %d", target, resp.StatusCode, wantStatus)
		}
		return nil
	}
	if err := do(); err != nil { // connections, tunnels and certificates are warm
		b.Fatal(err)
	}
	var before audit.Stats
	if bp.audit != nil {
		before = bp.audit.Stats()
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.SetParallelism(16) // 32 connections on 2 CPUs
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if bp.audit != nil {
		s := bp.audit.Stats()
		if w := s.Writes - before.Writes; w > 0 {
			b.ReportMetric(float64(s.Lines-before.Lines)/float64(w), "lines/write")
		}
	}
}

// processCPU returns the CPU time this process has used (user and system):
// per request, it is what the clients, the origin and the proxy cost
// together, and unlike the time per request it does not count the time
// other processes on a shared machine take.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThroughput compares bare goproxy with robotsproxy, both with the
// same outbound transport: allowed requests for 100 B and 64 KiB bodies,
// over plain HTTP and inside intercepted tunnels, and denied requests
// (403, robotsproxy only: compare its time per request with bare goproxy's
// allowed one). robotsproxy writes its audit log to a file through
// audit.Writer with the hash chain, as deployed; for 100 B bodies,
// robotsproxy-nochain leaves the chain out and robotsproxy-discard encodes
// the lines and discards them. Compare with benchstat over interleaved runs:
//
//	go test -c -o /tmp/proxy.test ./proxy/
//	for i in $(seq 10); do /tmp/proxy.test -test.run '^$' -test.bench Throughput >> /tmp/tp.txt; done
//	benchstat -col /proxy /tmp/tp.txt
func BenchmarkThroughput(b *testing.B) {
	for _, c := range []struct {
		name      string
		intercept bool
		path      string
		size      int
		status    int
		kinds     []string
	}{
		{"allowed/body=100B", false, "/size/100", 100, 200,
			[]string{"bare", "robotsproxy", "robotsproxy-nochain", "robotsproxy-discard"}},
		{"allowed/body=64KiB", false, "/size/65536", 64 << 10, 200, []string{"bare", "robotsproxy"}},
		{"intercepted/body=100B", true, "/size/100", 100, 200, []string{"bare", "robotsproxy"}},
		{"denied", false, "/nope/size/100", 0, 403, []string{"robotsproxy"}},
	} {
		for _, kind := range c.kinds {
			b.Run(c.name+"/proxy="+kind, func(b *testing.B) {
				o := benchOrigin(b, c.intercept)
				bp := newBenchProxy(b, kind, o, c.intercept)
				runThroughput(b, bp, o.URL+c.path, c.size, c.status)
			})
		}
	}
}

// BenchmarkDecide measures the enforcement hook alone on a warm cache.
func BenchmarkDecide(b *testing.B) {
	o := benchOrigin(b, false)
	guard := &netguard.Guard{AllowPrivate: true}
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: guard})
	pol := policy.New(policy.Options{
		Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache:      access.NewCache(fetcher.Fetch, access.CacheOptions{}),
	})
	req := policy.Request{
		Scheme: "http", Host: strings.TrimPrefix(o.URL, "http://"), Path: "/page/allowed.html",
		UserAgent: benchUA,
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
