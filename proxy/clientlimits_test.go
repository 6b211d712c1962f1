package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// testProxy is an in-process proxy served by an http.Server whose request
// contexts derive from a context the test cancels, as server.Run does.
type testProxy struct {
	p      *proxy.Proxy
	addr   string
	audit  *testkit.AuditSink
	reg    *prometheus.Registry
	cancel context.CancelCauseFunc
}

func newTestProxy(t *testing.T, fetchTimeout time.Duration, opts func(*proxy.Options)) *testProxy {
	t.Helper()
	tp := &testProxy{audit: &testkit.AuditSink{}, reg: prometheus.NewRegistry()}
	guard := &netguard.Guard{AllowPrivate: true}
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: guard, UserAgent: "robotsproxy-test", Timeout: fetchTimeout})
	cache := access.NewCache(fetcher.Fetch, access.CacheOptions{})
	o := proxy.Options{
		Policy:    policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: cache}),
		Transport: proxy.NewTransport(proxy.TransportOptions{AllowPrivate: guard.AllowPrivate, AllowPrivateRanges: guard.Allow}),
		Audit:     tp.audit,
		Metrics:   proxy.NewMetrics(tp.reg, cache.Len),
	}
	if opts != nil {
		opts(&o)
	}
	tp.p = proxy.New(o)
	base, cancel := context.WithCancelCause(context.Background())
	tp.cancel = cancel
	srv := httptest.NewUnstartedServer(tp.p)
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	t.Cleanup(func() { cancel(nil); srv.Close() })
	tp.addr = srv.Listener.Addr().String()
	return tp
}

// counter returns the value of name{label=value}.
func (tp *testProxy) counter(t *testing.T, name, value string) float64 {
	t.Helper()
	h := &harness{reg: tp.reg}
	return h.counter(t, name, value)
}

// rawRequest sends req on a new connection to addr and returns the
// response, reading for at most wait.
func rawRequest(t *testing.T, addr, req string, wait time.Duration) (*http.Response, string, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, req); err != nil {
		return nil, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, "", err
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body), nil
}

// TestURITooLong: a request target over MaxRequestTargetBytes is answered
// 414 before any policy work (no robots.txt fetch, nothing reaches the
// origin), and audited with reason uri-too-long, the url cut by the field
// bounds.
func TestURITooLong(t *testing.T) {
	const limit = 300
	o := newOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	tp := newTestProxy(t, time.Second, func(o *proxy.Options) {
		o.MaxRequestTargetBytes = limit
		o.MaxFieldBytes = 128
	})
	prefix := o.URL + "/"
	cases := []struct {
		name      string
		targetLen int
		status    int
	}{
		{"at the limit", limit, http.StatusOK},
		{"one over", limit + 1, http.StatusRequestURITooLong},
		{"far over", 7000, http.StatusRequestURITooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := prefix + strings.Repeat("a", c.targetLen-len(prefix))
			before := o.RobotsHits()
			lines := len(tp.audit.Lines(t))
			resp, body, err := rawRequest(t, tp.addr, "GET "+target+" HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", 5*time.Second)
			if err != nil {
				t.Fatalf("GET (target %d octets): %v", c.targetLen, err)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("GET (target %d octets): got status %d, want %d (body %.80q)", c.targetLen, resp.StatusCode, c.status, body)
			}
			line := tp.audit.WaitLines(t, lines+1)[lines]
			if c.status == http.StatusOK {
				return
			}
			if got := resp.Header.Get(proxy.HeaderReason); got != "uri-too-long" {
				t.Errorf("header %s: got %q, want uri-too-long", proxy.HeaderReason, got)
			}
			if n := o.RobotsHits() - before; n != 0 || o.Count("/"+strings.Repeat("a", c.targetLen-len(prefix))) != 0 {
				t.Errorf("414: got %d robots.txt fetches and an origin hit, want none", n)
			}
			assertFields(t, line, map[string]any{"decision": "deny", "reason": "uri-too-long", "status": float64(414),
				"method": "GET", "user_agent": "ExampleBot/1.0", "url_truncated": true, "url_length": float64(c.targetLen)})
			if u, _ := line["url"].(string); !strings.HasPrefix(target, u) || len(u) > 128 {
				t.Errorf("url field: got %q, want a prefix of the target of at most 128 octets", u)
			}
		})
	}
	if got := tp.counter(t, "robotsproxy_client_refusals_total", "uri_too_long"); got != 2 {
		t.Errorf("robotsproxy_client_refusals_total{cause=uri_too_long}: got %v, want 2", got)
	}
	if got := tp.counter(t, "robotsproxy_requests_total", "uri-too-long"); got != 2 {
		t.Errorf("robotsproxy_requests_total{reason=uri-too-long}: got %v, want 2", got)
	}
}

// TestBodyIdle: a client that stops sending its request body is cut off
// after BodyIdleTimeout (408, audited with cut_off body-idle), and a denied
// request's unread body cannot hold the response back; either way the
// connection is closed, so the rest of the body can never be read as a
// request. A client that keeps sending, however slowly, is not cut off.
func TestBodyIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	o := newOrigin(t, serveRobots("User-agent: *\nDisallow: /denied\n"))
	tp := newTestProxy(t, time.Second, func(o *proxy.Options) { o.BodyIdleTimeout, o.BodyMinRate = idle, 8 })
	cases := []struct {
		name   string
		path   string
		chunks int           // body octets sent, one per gap
		gap    time.Duration // between octets
		status int
		cutOff any
	}{
		{"stalls after 5 octets", "/upload", 5, 0, http.StatusRequestTimeout, "body-idle"},
		{"denied and stalled", "/denied", 5, 0, http.StatusForbidden, nil},
		{"slow but steady", "/upload", 10, idle / 3, http.StatusOK, nil}, // 10 octets/s
		// One octet every 200 ms never idles 300 ms, but averages 5 octets/s,
		// under the minimum of 8: cut off at about 1.1 s, before its 10th octet.
		{"trickles below the minimum rate", "/upload", 10, 200 * time.Millisecond, http.StatusRequestTimeout, "body-slow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := len(tp.audit.Lines(t))
			conn, err := net.Dial("tcp", tp.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s%s HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\nContent-Length: %d\r\n\r\n", o.URL, c.path, 10)
			for i := 0; i < c.chunks; i++ {
				time.Sleep(c.gap)
				_, _ = conn.Write([]byte("x"))
			}
			start := time.Now()
			_ = conn.SetReadDeadline(time.Now().Add(10 * idle))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("POST %s: no response within %v: %v", c.path, 10*idle, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("POST %s: got status %d after %v, want %d", c.path, resp.StatusCode, time.Since(start), c.status)
			}
			if c.status == http.StatusOK {
				return
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("POST %s with the body cut off: connection still open after the response (read: %v), want it closed", c.path, err)
			}
			line := tp.audit.WaitLines(t, lines+1)[lines]
			assertFields(t, line, map[string]any{"status": float64(c.status), "cut_off": c.cutOff})
		})
	}
}

// TestShutdownCutsOff: when the server cancels request contexts with
// ErrShutdown, a request waiting on its origin is answered 503 at once and
// audited as decided, with cut_off "shutdown".
func TestShutdownCutsOff(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer o.Close()
	tp := newTestProxy(t, time.Second, nil)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: tp.addr})}}
	type result struct {
		status int
		body   string
		err    error
		close  bool // Connection: close, which cutOffResponse sets
	}
	done := make(chan result, 1)
	go func() {
		resp, err := client.Get(o.URL + "/slow")
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{status: resp.StatusCode, body: string(b), close: resp.Close}
	}()
	<-arrived
	if n := tp.p.InFlight(); n != 1 {
		t.Errorf("InFlight with one request at the origin: got %d, want 1", n)
	}
	tp.cancel(proxy.ErrShutdown)
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no response within 5s of the shutdown cut-off")
	}
	if r.err != nil || r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "shutting down") {
		t.Errorf("cut-off request: got status %d body %q error %v, want 503 saying the proxy is shutting down", r.status, r.body, r.err)
	}
	if !r.close {
		t.Errorf("cut-off request: the 503 lost its Connection: close (stripped as if it were the origin's)")
	}
	line := tp.audit.WaitLines(t, 1)[0]
	assertFields(t, line, map[string]any{"decision": "allow", "reason": "rule", "cut_off": "shutdown", "status": float64(503)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !tp.p.WaitIdle(ctx) {
		t.Errorf("WaitIdle after the cut-off: %d handlers still running", tp.p.InFlight())
	}
}

// TestAbandon: a handler still running at the end of the shutdown grace
// (here: waiting on a robots.txt fetch) gets its audit line from Abandon,
// status 0 and reason shutdown, and writes none itself when it returns.
func TestAbandon(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
	})
	tp := newTestProxy(t, 10*time.Second, nil)
	t.Cleanup(unblock) // before the servers close, also on failure
	done := make(chan error, 1)
	go func() {
		_, _, err := rawRequest(t, tp.addr, "GET "+o.URL+"/page HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", 10*time.Second)
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for tp.p.InFlight() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := tp.p.Abandon(); n != 1 {
		t.Fatalf("Abandon with one handler waiting on robots.txt: got %d, want 1", n)
	}
	unblock()
	if err := <-done; err != nil {
		t.Errorf("abandoned request: %v (its handler still answers when it can)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tp.p.WaitIdle(ctx)
	lines := tp.audit.Lines(t)
	if len(lines) != 1 {
		t.Fatalf("audit lines: got %d (%v), want exactly 1", len(lines), lines)
	}
	assertFields(t, lines[0], map[string]any{"decision": "deny", "reason": "shutdown", "cut_off": "shutdown",
		"status": float64(0), "method": "GET", "url": o.URL + "/page", "user_agent": "ExampleBot/1.0"})
}

// TestAuditRefusal checks the line of a refusal the server reports: the
// common field names, and the target cut on read marked url_truncated
// without a length.
func TestAuditRefusal(t *testing.T) {
	tp := newTestProxy(t, time.Second, func(o *proxy.Options) { o.MaxFieldBytes = 64 })
	tp.p.AuditRefusal(proxy.Refusal{Client: "192.0.2.1:1234", Method: "GET", Target: "http://a.example/" + strings.Repeat("p", 100),
		TargetCut: true, Status: 431, Bytes: 35, Reason: auditlog.ReasonHeaderTooLarge, Cause: proxy.CauseHeaderTooLarge,
		Err: errors.New("refused by the HTTP server: Request Header Fields Too Large")})
	line := tp.audit.Lines(t)[0]
	assertFields(t, line, map[string]any{"client": "192.0.2.1:1234", "method": "GET", "decision": "deny",
		"reason": "header-too-large", "status": float64(431), "bytes": float64(35), "url_truncated": true, "user_agent": ""})
	if _, ok := line["url_length"]; ok {
		t.Errorf("url_length: got %v, want none (the length is unknown)", line["url_length"])
	}
	if u, _ := line["url"].(string); len(u) != 64 {
		t.Errorf("url: got %d octets, want 64", len(u))
	}
	if got := tp.counter(t, "robotsproxy_client_refusals_total", "header_too_large"); got != 1 {
		t.Errorf("robotsproxy_client_refusals_total{cause=header_too_large}: got %v, want 1", got)
	}
}
