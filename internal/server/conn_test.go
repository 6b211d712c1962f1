package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestServerRefusalsAudited sends requests that Go's HTTP server refuses
// itself, without calling the proxy handler: each gets exactly one audit
// line (decision deny, the status sent, method, url and User-Agent as far
// as they arrived) and is counted by cause.
func TestServerRefusalsAudited(t *testing.T) {
	ts := startServer(t, func(c *config.Config) {
		c.Client.MaxHeaderBytes = 1024
		c.Client.ReadHeaderTimeout = 300 * time.Millisecond
	})
	big := strings.Repeat("b", 8<<10)
	cases := []struct {
		name    string
		req     string
		status  int
		reason  string
		cause   string
		method  string
		url     string
		ua      string
		errPart string
	}{
		{"control octet in target", "GET http://a.example/\x01 HTTP/1.1\r\nHost: a\r\nUser-Agent: Bot/1\r\n\r\n",
			400, "malformed-request", "malformed", "GET", "http://a.example/\x01", "Bot/1", "Bad Request"},
		{"headers too large", "GET http://a.example/big HTTP/1.1\r\nHost: a\r\nUser-Agent: Bot/2\r\nX-Big: " + big + "\r\n\r\n",
			431, "header-too-large", "header_too_large", "GET", "http://a.example/big", "Bot/2", "Request Header Fields Too Large"},
		{"unsupported transfer coding", "POST http://a.example/te HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
			501, "malformed-request", "malformed", "POST", "http://a.example/te", "", "Not Implemented"},
		{"missing Host", "GET http://a.example/nohost HTTP/1.1\r\nUser-Agent: Bot/3\r\n\r\n",
			400, "malformed-request", "malformed", "GET", "http://a.example/nohost", "Bot/3", "missing required Host header"},
		{"HTTP/2.0 request line", "GET http://a.example/h2 HTTP/2.0\r\nHost: a\r\n\r\n",
			505, "malformed-request", "malformed", "GET", "http://a.example/h2", "", "unsupported protocol version"},
		{"unknown expectation", "GET http://a.example/expect HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n",
			417, "malformed-request", "malformed", "GET", "http://a.example/expect", "", "Expectation Failed"},
		{"request line cut by the header timeout", "GET http://a.example/slowloris",
			400, "client-timeout", "header_timeout", "GET", "http://a.example/slowloris", "", "read_header_timeout"},
		{"headers cut by the header timeout", "GET http://a.example/slow HTTP/1.1\r\nHost: a\r\nUser-Agent: Bot/4\r\nX-A: 1\r\n",
			0, "client-timeout", "header_timeout", "GET", "http://a.example/slow", "Bot/4", "read_header_timeout"},
		{"OPTIONS * reaches the proxy handler", "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			400, "not-proxied", "", "OPTIONS", "*", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(ts.audit.Lines(t))
			sample := fmt.Sprintf("robotsproxy_client_refusals_total{cause=%q}", c.cause)
			before := ts.metric(t, sample)
			raw, closed := ts.exchange(t, c.req, 3*time.Second)
			if got := statusOf(raw); got != c.status || !closed {
				t.Fatalf("got status %d (closed %v), want %d and the connection closed; response %.120q", got, closed, c.status, raw)
			}
			lines := ts.audit.WaitLines(t, n+1)
			time.Sleep(50 * time.Millisecond) // a second line would be a bug
			if lines = ts.audit.Lines(t); len(lines) != n+1 {
				t.Fatalf("audit: got %d new lines, want exactly 1: %v", len(lines)-n, lines[n:])
			}
			line := lines[n]
			for k, want := range map[string]any{"reason": c.reason, "status": float64(c.status), "method": c.method,
				"url": c.url, "user_agent": c.ua} {
				if line[k] != want {
					t.Errorf("audit field %s: got %#v, want %#v (line %v)", k, line[k], want, line)
				}
			}
			if e, _ := line["error"].(string); !strings.Contains(e, c.errPart) {
				t.Errorf("audit field error: got %q, want it to contain %q", e, c.errPart)
			}
			if c.cause != "" {
				if got := ts.metric(t, sample) - before; got != 1 {
					t.Errorf("%s: got +%v, want +1", sample, got)
				}
			}
		})
	}
}

// TestTimeoutsCounted: a connection that sends nothing is closed after
// read_header_timeout, and a keep-alive connection after idle_timeout;
// both are counted, and neither writes an audit line (no request).
func TestTimeoutsCounted(t *testing.T) {
	ts := startServer(t, func(c *config.Config) {
		c.Client.ReadHeaderTimeout = 300 * time.Millisecond
		c.Client.IdleTimeout = 300 * time.Millisecond
	})
	t.Run("silent connection", func(t *testing.T) {
		n := len(ts.audit.Lines(t))
		start := time.Now()
		raw, closed := ts.exchange(t, "", 3*time.Second)
		if !closed || raw != "" || time.Since(start) > 2*time.Second {
			t.Errorf("silent connection: closed %v after %v with %q, want closed within 2s with nothing sent", closed, time.Since(start), raw)
		}
		if got := ts.metric(t, `robotsproxy_client_refusals_total{cause="header_timeout"}`); got != 1 {
			t.Errorf("header_timeout refusals: got %v, want 1", got)
		}
		if l := ts.audit.Lines(t); len(l) != n {
			t.Errorf("audit: got %d new lines, want none: %v", len(l)-n, l[n:])
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		n := len(ts.audit.Lines(t))
		start := time.Now()
		raw, closed := ts.exchange(t, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 3*time.Second)
		if statusOf(raw) != 400 || !closed || time.Since(start) > 2*time.Second {
			t.Errorf("idle keep-alive: status %d, closed %v after %v; want 400, then closed within 2s", statusOf(raw), closed, time.Since(start))
		}
		if got := ts.metric(t, `robotsproxy_client_refusals_total{cause="idle_timeout"}`); got != 1 {
			t.Errorf("idle_timeout refusals: got %v, want 1", got)
		}
		if l := ts.audit.Lines(t); len(l) != n+1 {
			t.Errorf("audit: got %d new lines, want 1 (the request's)", len(l)-n)
		}
	})
}

// TestMaxConnections: with max_connections open, the next client waits
// until one closes; each wait is counted, and the gauge shows the open
// connections.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Client.MaxConnections = 2 })
	var open []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		open = append(open, c)
	}
	third, err := net.Dial("tcp", ts.addr) // the kernel accepts it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprint(third, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	if raw, _ := readUntilClosed(third, 500*time.Millisecond); raw != "" {
		t.Fatalf("third connection with max_connections 2: got %.60q, want no answer while two are open", raw)
	}
	if got := ts.metric(t, "robotsproxy_client_connections"); got != 2 {
		t.Errorf("robotsproxy_client_connections: got %v, want 2", got)
	}
	if got := ts.metric(t, `robotsproxy_client_refusals_total{cause="max_connections"}`); got < 1 {
		t.Errorf("max_connections refusals: got %v, want at least 1", got)
	}
	open[0].Close()
	if raw, _ := readUntilClosed(third, 3*time.Second); statusOf(raw) != 400 {
		t.Errorf("third connection after one closed: got %.60q, want its 400 (not a proxy request)", raw)
	}
}

// TestBodyIdleCounted: a request body that stalls is cut off after
// body_idle_timeout (408) and counted as body_idle.
func TestBodyIdleCounted(t *testing.T) {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer o.Close()
	ts := startServer(t, func(c *config.Config) { c.Client.BodyIdleTimeout = 300 * time.Millisecond })
	raw, _ := ts.exchange(t, "POST "+o.URL+"/upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc", 3*time.Second)
	if got := statusOf(raw); got != http.StatusRequestTimeout {
		t.Errorf("stalled body: got status %d, want 408 (%.80q)", got, raw)
	}
	if got := ts.metric(t, `robotsproxy_client_refusals_total{cause="body_idle"}`); got != 1 {
		t.Errorf("body_idle refusals: got %v, want 1", got)
	}
	line := ts.audit.WaitLines(t, 1)[0]
	if line["cut_off"] != "body-idle" || line["status"] != float64(408) {
		t.Errorf("audit line: got cut_off %v status %v, want body-idle 408", line["cut_off"], line["status"])
	}
}
