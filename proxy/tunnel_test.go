package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// interceptedLines returns the audit lines of requests inside tunnels, or
// refused there (a cut tunnel's line has no intercepted field: it names the
// tunnel's https URL, cut).
func interceptedLines(t *testing.T, h *harness, n int) []map[string]any {
	t.Helper()
	var inner []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for len(inner) < n && time.Now().Before(deadline) {
		inner = inner[:0]
		for _, l := range h.audit.Lines(t) {
			if l["intercepted"] == true || l["reason"] == "header-too-large" || l["reason"] == "client-timeout" {
				inner = append(inner, l)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return inner
}

// TestInterceptHeaderLimit: inside an intercepted tunnel, the request line
// and headers are bounded by client.max_header_bytes as outside (goproxy
// reads them, past the server's limit): over the limit, 431 and the tunnel
// closed; far over it, the tunnel is cut before goproxy holds it all. The
// origin sees neither, and each is audited header-too-large.
func TestInterceptHeaderLimit(t *testing.T) {
	const limit = 32 << 10
	tests := []struct {
		name   string
		header int // octets of one header value
		status int // 0: the tunnel is cut, no answer
	}{
		{"within the limit", limit / 2, http.StatusOK},
		{"within the slack", limit + 2048, http.StatusOK},
		{"over the limit", 64 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB", 1 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
			h, _, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) { po.MaxHeaderBytes = limit })
			req, _ := http.NewRequest("GET", o.URL+"/x", nil)
			req.Header.Set("User-Agent", "ExampleBot/1.0")
			req.Header.Set("X-Big", strings.Repeat("a", tt.header))
			resp, err := h.client.Do(req)
			status := 0
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			if status != tt.status {
				t.Fatalf("a %d-octet header in a tunnel: got %d (err %v), want %d", tt.header, status, err, tt.status)
			}
			if tt.status == http.StatusOK {
				if n := o.hitCount("/x"); n != 1 {
					t.Errorf("the origin got %d requests, want 1", n)
				}
				return
			}
			if n := o.hitCount("/x"); n != 0 {
				t.Errorf("the origin got the request %d times, want 0", n)
			}
			if resp != nil && resp.Header.Get(proxy.HeaderReason) != "header-too-large" {
				t.Errorf("%s: %q, want header-too-large", proxy.HeaderReason, resp.Header.Get(proxy.HeaderReason))
			}
			lines := interceptedLines(t, h, 1)
			if len(lines) != 1 {
				t.Fatalf("audit lines of the tunnel's requests: %v, want 1", lines)
			}
			if l := lines[0]; l["reason"] != "header-too-large" || l["status"] != float64(tt.status) || l["decision"] != "deny" {
				t.Errorf("audit line %v: want deny, reason header-too-large, status %d", l, tt.status)
			}
			if got := h.counter(t, "robotsproxy_client_refusals_total", "header_too_large"); got != 1 {
				t.Errorf("robotsproxy_client_refusals_total{cause=header_too_large} = %v, want 1", got)
			}
			// A new tunnel works.
			if resp, _ := h.do(t, "GET", o.URL+"/after", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
				t.Errorf("a request after it: got %d, want 200", resp.StatusCode)
			}
		})
	}
}

// stallingBody sends its first octets, then nothing until ctx ends (or
// for 3 s, so that a proxy that waits forever fails the test instead of
// hanging it).
type stallingBody struct {
	ctx  context.Context
	sent bool
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "part of a body"), nil
	}
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-time.After(3 * time.Second):
		return 0, errors.New("the test's body gave up stalling")
	}
}

// TestInterceptBodyIdle: inside an intercepted tunnel, a request body that
// stalls is cut off after client.body_idle_timeout with 408 and cut_off
// "body-idle", as outside; a body that comes whole is forwarded, and the
// tunnel serves the next request.
func TestInterceptBodyIdle(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h, _, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) {
		po.BodyIdleTimeout = 200 * time.Millisecond
	})
	resp, body := h.do(t, "POST", o.URL+"/whole", "ExampleBot/1.0", strings.Repeat("b", 100<<10))
	if resp.StatusCode != 200 || body != "origin:POST:/whole" {
		t.Fatalf("a whole body: got %d %q, want 200 from the origin", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "GET", o.URL+"/next", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
		t.Fatalf("the next request: got %d, want 200", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", o.URL+"/stall", &stallingBody{ctx: ctx})
	req.ContentLength = 1000
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("a stalled body: %v (after %s), want 408", err, time.Since(start))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a stalled body: got %d, want 408", resp.StatusCode)
	}
	var line map[string]any
	for _, l := range interceptedLines(t, h, 4) {
		if strings.HasSuffix(l["url"].(string), "/stall") {
			line = l
		}
	}
	if line["cut_off"] != "body-idle" || line["status"] != 408.0 {
		t.Errorf("audit line %v: want status 408, cut_off body-idle", line)
	}
	if resp, _ := h.do(t, "GET", o.URL+"/after", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("a request after it: got %d, want 200", resp.StatusCode)
	}
}

// TestInterceptUpgradeNotCounted: after a protocol switch (101) inside an
// intercepted tunnel, what the tunnel carries is not a request header: a
// WebSocket stream longer than the header cap passes whole.
func TestInterceptUpgradeNotCounted(t *testing.T) {
	o := &origin{hits: map[string]int{}}
	robots := serveRobots("User-agent: *\nAllow: /\n")
	o.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots(w, r)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = brw.Flush()
		_, _ = io.Copy(c, brw) // echo
	}))
	t.Cleanup(o.Close)
	h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) { po.MaxHeaderBytes = 1024 })

	c, err := net.Dial("tcp", h.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	host := strings.TrimPrefix(o.URL, "https://")
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: ca.CertPool(), ServerName: "127.0.0.1"})
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", host)
	tbr := bufio.NewReader(tc)
	resp, err := http.ReadResponse(tbr, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v, want 101", resp, err)
	}
	frames := bytes.Repeat([]byte("f"), 512<<10) // far over the header cap
	go func() { _, _ = tc.Write(frames) }()
	got, err := io.ReadAll(io.LimitReader(tbr, int64(len(frames))))
	if len(got) != len(frames) {
		t.Errorf("echoed %d of %d octets after the upgrade (%v), want all", len(got), len(frames), err)
	}
}

// rawTunnel opens an intercepted tunnel to o through h's proxy and returns
// its TLS connection (the handshake done) and a reader on it.
func rawTunnel(t *testing.T, h *harness, ca interface{ CertPool() *x509.CertPool }, o *origin) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	host := strings.TrimPrefix(o.URL, "https://")
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: ca.CertPool(), ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc, bufio.NewReader(tc)
}

// TestInterceptWaits: inside an intercepted tunnel, client.read_header_timeout
// bounds a request's headers (the tunnel closed, audited client-timeout)
// and client.idle_timeout the wait between requests (closed, counted), as
// outside; an answer slower than both does not count against them.
func TestInterceptWaits(t *testing.T) {
	o := &origin{hits: map[string]int{}}
	robots := serveRobots("User-agent: *\nAllow: /\n")
	o.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots(w, r)
			return
		}
		if r.URL.Path == "/slow" {
			time.Sleep(700 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	t.Cleanup(o.Close)
	h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) {
		po.ReadHeaderTimeout, po.IdleTimeout = 300*time.Millisecond, 400*time.Millisecond
	})
	host := strings.TrimPrefix(o.URL, "https://")
	get := func(tc *tls.Conn, br *bufio.Reader, path string) int {
		fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", path, host)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	closedWithin := func(br *bufio.Reader, d time.Duration) bool {
		start := time.Now()
		_, err := br.ReadByte()
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && time.Since(start) < d
	}

	t.Run("slow answer, then idle", func(t *testing.T) {
		tc, br := rawTunnel(t, h, ca, o)
		if s := get(tc, br, "/slow"); s != 200 {
			t.Fatalf("an answer slower than the idle and header timeouts: got %d, want 200", s)
		}
		if s := get(tc, br, "/next"); s != 200 {
			t.Fatalf("the next request on the tunnel: got %d, want 200", s)
		}
		if !closedWithin(br, 3*time.Second) {
			t.Errorf("an idle tunnel was not closed after client.idle_timeout")
		}
		if got := h.counter(t, "robotsproxy_client_refusals_total", "idle_timeout"); got != 1 {
			t.Errorf("robotsproxy_client_refusals_total{cause=idle_timeout} = %v, want 1", got)
		}
	})
	t.Run("headers that stop", func(t *testing.T) {
		tc, br := rawTunnel(t, h, ca, o)
		fmt.Fprintf(tc, "GET /never HTTP/1.1\r\nHost: %s\r\n", host)
		if !closedWithin(br, 3*time.Second) {
			t.Fatalf("a tunnel whose request headers stopped was not closed after client.read_header_timeout")
		}
		var line map[string]any
		for _, l := range interceptedLines(t, h, 3) { // /slow, /next, and this one
			if l["reason"] == "client-timeout" {
				line = l
			}
		}
		if line["status"] != 0.0 || line["url"] != o.URL || line["url_truncated"] != true {
			t.Errorf("audit line %v: want reason client-timeout, status 0, the tunnel's url cut", line)
		}
		if got := h.counter(t, "robotsproxy_client_refusals_total", "header_timeout"); got != 1 {
			t.Errorf("robotsproxy_client_refusals_total{cause=header_timeout} = %v, want 1", got)
		}
		if n := o.hitCount("/never"); n != 0 {
			t.Errorf("the origin got the unfinished request %d times", n)
		}
	})
}
