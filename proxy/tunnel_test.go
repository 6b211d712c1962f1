package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// interceptedLines returns the audit lines of requests inside tunnels.
func interceptedLines(t *testing.T, h *harness, n int) []map[string]any {
	t.Helper()
	var inner []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for len(inner) < n && time.Now().Before(deadline) {
		inner = inner[:0]
		for _, l := range h.audit.Lines(t) {
			if l["intercepted"] == true {
				inner = append(inner, l)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return inner
}

// TestInterceptHeaderLimit: inside an intercepted tunnel, the request line
// and headers are bounded by client.max_header_bytes as outside, over
// HTTP/1.1 and HTTP/2 alike: over the limit, even far over it, 431, and
// the origin never sees the request. Over HTTP/1.1 the tunnel's HTTP
// server answers, and the tunnel ends (the server that accepted the
// connection audits those refusals: see package server); over HTTP/2 the
// proxy answers, with the refusal's fields and its audit line, and the
// connection serves the next stream.
func TestInterceptHeaderLimit(t *testing.T) {
	const limit = 32 << 10
	tests := []struct {
		name   string
		header int // octets of one header value
		status int
	}{
		{"within the limit", limit / 2, http.StatusOK},
		{"within the slack", limit + 2048, http.StatusOK},
		{"over the limit", 64 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, h2 := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if h2 {
				name = "HTTP/2 " + name
			}
			t.Run(name, func(t *testing.T) {
				o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
				h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) { po.MaxHeaderBytes = limit })
				client := h.client
				if h2 {
					client = h2Client(h, ca)
				}
				req, _ := http.NewRequest("GET", o.URL+"/x", nil)
				req.Header.Set("User-Agent", "ExampleBot/1.0")
				req.Header.Set("X-Big", strings.Repeat("a", tt.header))
				resp, err := client.Do(req)
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				if h2 && tt.header == 1<<20 {
					// Past twice the limit, the HTTP/2 library ends the
					// connection itself (GOAWAY COMPRESSION_ERROR for one
					// field that long), before the proxy sees the request.
					if err == nil && status != tt.status {
						t.Fatalf("a 1 MiB header over HTTP/2: got %d, want the connection ended or 431", status)
					}
				} else if status != tt.status {
					t.Fatalf("a %d-octet header in a tunnel: got %d (err %v), want %d", tt.header, status, err, tt.status)
				}
				if tt.status == http.StatusOK {
					if n := o.Count("/x"); n != 1 {
						t.Errorf("the origin got %d requests, want 1", n)
					}
					return
				}
				if n := o.Count("/x"); n != 0 {
					t.Errorf("the origin got the request %d times, want 0", n)
				}
				if h2 && tt.header < 1<<20 {
					if r := resp.Header.Get(proxy.HeaderReason); r != "header-too-large" {
						t.Errorf("%s: %q, want header-too-large", proxy.HeaderReason, r)
					}
					lines := interceptedLines(t, h, 1)
					if len(lines) != 1 {
						t.Fatalf("audit lines of the tunnel's requests: %v, want 1", lines)
					}
					if l := lines[0]; l["reason"] != "header-too-large" || l["status"] != 431.0 || l["protocol"] != "HTTP/2" {
						t.Errorf("audit line %v: want reason header-too-large, status 431, protocol HTTP/2", l)
					}
					if got := h.counter(t, "robotsproxy_client_refusals_total", "header_too_large"); got != 1 {
						t.Errorf("robotsproxy_client_refusals_total{cause=header_too_large} = %v, want 1", got)
					}
				}
				// The next request works.
				if resp, _ := send(t, client, "GET", o.URL+"/after", "ExampleBot/1.0"); resp.StatusCode != 200 {
					t.Errorf("a request after it: got %d, want 200", resp.StatusCode)
				}
			})
		}
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
// "body-idle", as outside, over HTTP/1.1 and HTTP/2 (a stream's own read
// deadline); a body that comes whole is forwarded, and the tunnel serves
// the next request.
func TestInterceptBodyIdle(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
			h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) {
				po.BodyIdleTimeout = 200 * time.Millisecond
			})
			if h2 {
				h.client = h2Client(h, ca)
			}
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
			for _, l := range interceptedLines(t, h, 3) {
				if strings.HasSuffix(l["url"].(string), "/stall") {
					line = l
				}
			}
			if line["cut_off"] != "body-idle" || line["status"] != 408.0 {
				t.Errorf("audit line %v: want status 408, cut_off body-idle", line)
			}
			if h2 { // no connection watcher sees a stream's timeout: the proxy counts it
				if got := h.counter(t, "robotsproxy_client_refusals_total", "body_idle"); got != 1 {
					t.Errorf("robotsproxy_client_refusals_total{cause=body_idle} = %v, want 1", got)
				}
			}
			if resp, _ := h.do(t, "GET", o.URL+"/after", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
				t.Errorf("a request after it: got %d, want 200", resp.StatusCode)
			}
		})
	}
}

// switchOrigin is a TLS origin whose /ws completes a WebSocket handshake
// (RFC 6455 4.2.2) and then echoes, and whose /h2c answers 101 with
// "Upgrade: h2c" whatever it is sent, then echoes. It records the
// Upgrade field of each request.
func switchOrigin(t *testing.T) (*origin, func() []string) {
	t.Helper()
	o := &origin{}
	robots := serveRobots("User-agent: *\nAllow: /\n")
	var mu sync.Mutex
	var upgrades []string
	o.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots(w, r)
			return
		}
		mu.Lock()
		upgrades = append(upgrades, r.Header.Get("Upgrade"))
		mu.Unlock()
		head := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
		switch r.URL.Path {
		case "/ws":
			sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
				base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
		case "/h2c":
		default:
			_, _ = io.WriteString(w, "origin:"+r.URL.Path)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString(head)
		_ = brw.Flush()
		_, _ = io.Copy(c, brw) // echo
	}))
	t.Cleanup(o.Close)
	return o, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), upgrades...)
	}
}

// TestInterceptWebSocket: a WebSocket handshake inside an intercepted
// tunnel that the origin completes switches the tunnel to the origin's
// connection: what it carries then is not a request header, and a
// stream longer than the header limit passes whole.
func TestInterceptWebSocket(t *testing.T) {
	o, _ := switchOrigin(t)
	h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) { po.MaxHeaderBytes = 1024 })
	tc, br := rawTunnel(t, h, ca, o)
	host := strings.TrimPrefix(o.URL, "https://")
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v, want 101", resp, err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("Sec-WebSocket-Accept %q, want the origin's (RFC 6455 1.3's example)", got)
	}
	frames := bytes.Repeat([]byte("f"), 512<<10) // far over the header limit
	go func() { _, _ = tc.Write(frames) }()
	got, err := io.ReadAll(io.LimitReader(br, int64(len(frames))))
	if len(got) != len(frames) {
		t.Errorf("echoed %d of %d octets after the upgrade (%v), want all", len(got), len(frames), err)
	}
}

// TestInterceptProtocolSwitchRefused: inside an intercepted tunnel, only a
// WebSocket handshake switches protocols. A request's "Upgrade: h2c" is
// not forwarded; an origin that answers 101 to it anyway, or to a
// WebSocket handshake without the Sec-WebSocket-Accept its key asks for,
// gets its client a 502, and the tunnel keeps reading requests with every
// limit in force: a header over the limit gets 431, and a tunnel left
// idle is closed after client.idle_timeout.
func TestInterceptProtocolSwitchRefused(t *testing.T) {
	o, upgrades := switchOrigin(t)
	h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) {
		po.MaxHeaderBytes, po.IdleTimeout = 1024, 500*time.Millisecond
	})
	host := strings.TrimPrefix(o.URL, "https://")
	switchTo := func(tc *tls.Conn, br *bufio.Reader, path, fields string) *http.Response {
		t.Helper()
		fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\n%s\r\n", path, host, fields)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp
	}
	h2c := "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n"
	badKey := "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

	tc, br := rawTunnel(t, h, ca, o)
	for _, c := range []struct{ path, fields string }{{"/h2c", h2c}, {"/h2c", badKey}} {
		if resp := switchTo(tc, br, c.path, c.fields); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("GET %s with %q: got %d, want 502", c.path, c.fields, resp.StatusCode)
		}
	}
	if u := upgrades(); len(u) != 2 || u[0] != "" || u[1] != "websocket" {
		t.Errorf("the origin got Upgrade fields %q, want none for h2c, then websocket", u)
	}
	fmt.Fprintf(tc, "GET /big HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", host, strings.Repeat("b", 64<<10))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a header over the limit after the refused switches: %v %v, want 431", resp, err)
	}

	tc, br = rawTunnel(t, h, ca, o)
	if resp := switchTo(tc, br, "/h2c", h2c); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("GET /h2c: got %d, want 502", resp.StatusCode)
	}
	start := time.Now()
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("an idle tunnel after a refused switch: read %v after %s, want it closed after client.idle_timeout", err, time.Since(start))
	}
	var lines []map[string]any
	for _, l := range interceptedLines(t, h, 3) {
		if l["status"] == 502.0 {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 || !strings.Contains(fmt.Sprint(lines[0]["error"]), "101") {
		t.Errorf("audit lines of the refused switches: %v, want 3 with status 502 and the error", lines)
	}
}

// rawTunnel opens an intercepted tunnel to o through h's proxy and returns
// its TLS connection (the handshake done) and a reader on it.
func rawTunnel(t *testing.T, h *harness, ca interface{ CertPool() *x509.CertPool }, o *origin) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	c, _ := openTunnel(t, h, o)
	tc := tls.Client(c, &tls.Config{RootCAs: ca.CertPool(), ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc, bufio.NewReader(tc)
}

// openTunnel opens a tunnel to o through h's proxy and returns the
// client's connection once the CONNECT is answered 200, and a reader on
// it.
func openTunnel(t *testing.T, h *harness, o *origin) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	host := strings.TrimPrefix(o.URL, "https://")
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c, br
}

// TestInterceptWaits: inside an intercepted tunnel, client.read_header_timeout
// bounds a request's headers and client.idle_timeout the wait between
// requests, as outside: past either the tunnel is closed (the server that
// accepted the connection audits and counts them: see package server);
// an answer slower than both does not count against them.
func TestInterceptWaits(t *testing.T) {
	o := &origin{}
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
	})
	t.Run("headers that stop", func(t *testing.T) {
		tc, br := rawTunnel(t, h, ca, o)
		fmt.Fprintf(tc, "GET /never HTTP/1.1\r\nHost: %s\r\n", host)
		if !closedWithin(br, 3*time.Second) {
			t.Fatalf("a tunnel whose request headers stopped was not closed after client.read_header_timeout")
		}
		if n := o.Count("/never"); n != 0 {
			t.Errorf("the origin got the unfinished request %d times", n)
		}
	})
	t.Run("no first octet", func(t *testing.T) {
		_, br := openTunnel(t, h, o)
		if !closedWithin(br, 3*time.Second) {
			t.Errorf("a tunnel that never sent its first octet was not closed after client.idle_timeout")
		}
		if got := h.counter(t, "robotsproxy_client_refusals_total", "idle_timeout"); got != 1 {
			t.Errorf("robotsproxy_client_refusals_total{cause=idle_timeout} = %v, want 1", got)
		}
	})
	t.Run("handshake that stops", func(t *testing.T) {
		c, br := openTunnel(t, h, o)
		_, _ = c.Write([]byte{22, 3, 1}) // the start of a TLS record
		if !closedWithin(br, 3*time.Second) {
			t.Fatalf("a tunnel whose TLS handshake stopped was not closed after client.read_header_timeout")
		}
		var line map[string]any
		for _, l := range interceptedLines(t, h, 1) {
			if l["reason"] == "client-timeout" {
				line = l
			}
		}
		if line["status"] != 0.0 || line["url"] != o.URL || line["url_truncated"] != true {
			t.Errorf("audit line %v: want reason client-timeout, status 0, the tunnel's url cut", line)
		}
	})
}
