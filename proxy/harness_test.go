package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// harness is an in-process robotsproxy in front of test origins.
type harness struct {
	proxyURL *url.URL
	audit    *testkit.AuditSink
	reg      *prometheus.Registry
	client   *http.Client
	fetches  atomic.Int64 // robots.txt fetches made by the policy
	proxy    *proxy.Proxy
	popts    policy.Options // the policy's options, for a reload's new policy
}

type harnessOptions struct {
	guard        *netguard.Guard
	fetchTimeout time.Duration
	tls          *tls.Config // upstream TLS for robots.txt fetches and requests
	policy       func(*policy.Options)
	proxy        func(*proxy.Options)
	clientTLS    *tls.Config // the client's TLS config, default tls
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.guard == nil {
		o.guard = &netguard.Guard{AllowPrivate: true}
	}
	if o.fetchTimeout == 0 {
		o.fetchTimeout = 2 * time.Second
	}
	if o.clientTLS == nil {
		o.clientTLS = o.tls
	}
	h := &harness{audit: &testkit.AuditSink{}, reg: prometheus.NewRegistry()}
	fetcher := access.NewFetcher(access.FetcherOptions{
		Guard: o.guard, UserAgent: "robotsproxy-test", Timeout: o.fetchTimeout,
		TooManyRequestsUnreachable: true, TLS: o.tls,
	})
	var metrics *proxy.Metrics
	cache := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		h.fetches.Add(1)
		a := fetcher.Fetch(ctx, scheme, authority)
		metrics.ObserveFetch(a)
		return a
	}, access.CacheOptions{})
	metrics = proxy.NewMetrics(h.reg, cache.Len)
	popts := policy.Options{
		Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache:      cache,
	}
	if o.policy != nil {
		o.policy(&popts)
	}
	h.popts = popts
	tr := proxy.NewTransport(proxy.TransportOptions{AllowPrivate: o.guard.AllowPrivate, AllowPrivateRanges: o.guard.Allow, TLS: o.tls})
	opts := proxy.Options{Policy: policy.New(popts), Transport: tr, Audit: h.audit, Metrics: metrics}
	if o.proxy != nil {
		o.proxy(&opts)
	}
	p := proxy.New(opts)
	h.proxy = p
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	h.proxyURL, _ = url.Parse(srv.URL)
	h.client = &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL), TLSClientConfig: o.clientTLS, MaxIdleConnsPerHost: 64},
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return h
}

// get sends one request through the proxy.
func (h *harness) do(t *testing.T, method, target, ua string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	} else {
		req.Header["User-Agent"] = nil // send none
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s via proxy: %v", method, target, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp, b.String()
}

// origin is a test origin that serves a scripted /robots.txt and counts
// hits on every other path (testkit.Visits).
type origin struct {
	*httptest.Server
	testkit.Visits
}

func newOrigin(t *testing.T, robots http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewServer(o.handler(robots))
	t.Cleanup(o.Close)
	return o
}

func newTLSOrigin(t *testing.T, robots http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewTLSServer(o.handler(robots))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) handler(robots http.HandlerFunc) http.Handler {
	return o.Visits.Handler(robots, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Origin", "yes")
		if strings.HasPrefix(r.URL.Path, "/big/") { // 256 KiB with a Content-Length
			w.Header().Set("Content-Length", strconv.Itoa(256<<10))
			_, _ = w.Write(bytes.Repeat([]byte("x"), 256<<10))
			return
		}
		if strings.HasPrefix(r.URL.Path, "/chunked/") { // the same body, sent chunked
			_, _ = w.Write([]byte("origin:"))
			http.NewResponseController(w).Flush()
			_, _ = w.Write([]byte(r.Method + ":" + r.URL.Path))
			return
		}
		_, _ = w.Write([]byte("origin:" + r.Method + ":" + r.URL.Path))
	}))
}

// serveRobots answers /robots.txt with a 200 and body.
func serveRobots(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(body))
	}
}

// statusRobots answers /robots.txt with a status and a body that, were it
// parsed, would allow everything.
func statusRobots(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
	}
}
