package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rawExchange sends req on a new connection to addr and reads until the
// proxy closes it or wait passes; closed reports which.
func rawExchange(t *testing.T, addr, req string, wait time.Duration) (resp string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	var out bytes.Buffer
	_, err = io.Copy(&out, c)
	return out.String(), err == nil
}

// rawStatus is the status code of the response in raw, 0 if none.
func rawStatus(raw string) int {
	if !strings.HasPrefix(raw, "HTTP/1.") || len(raw) < 12 {
		return 0
	}
	n, _ := strconv.Atoi(raw[9:12])
	return n
}

// TestClientLimits drives the built binary over raw sockets with requests
// each client limit refuses, and requests Go's HTTP server refuses on its
// own: every one gets its status, exactly one audit line, and a count in
// robotsproxy_client_refusals_total.
func TestClientLimits(t *testing.T) {
	p := startProxy(t, `client:
  max_request_target_bytes: 300
  max_header_bytes: 1024
  read_header_timeout: 500ms
  idle_timeout: 500ms
  body_idle_timeout: 500ms
`)
	long := "http://a.example/" + strings.Repeat("l", 400)
	cases := []struct {
		name   string
		req    string
		status int
		reason string
		cause  string
		url    string
	}{
		{"target too long", "GET " + long + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			414, "uri-too-long", "uri_too_long", long},
		{"headers too large", "GET http://a.example/h HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", 8<<10) + "\r\n\r\n",
			431, "header-too-large", "header_too_large", "http://a.example/h"},
		{"control octet", "GET http://a.example/\x7f HTTP/1.1\r\nHost: a\r\n\r\n",
			400, "malformed-request", "malformed", "http://a.example/\x7f"},
		{"bad transfer coding", "POST http://a.example/te HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: br\r\n\r\n",
			501, "malformed-request", "malformed", "http://a.example/te"},
		{"request line never ends", "GET http://a.example/slowloris",
			400, "client-timeout", "header_timeout", "http://a.example/slowloris"},
		{"headers never end", "GET http://a.example/slow HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n",
			0, "client-timeout", "header_timeout", "http://a.example/slow"},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			400, "not-proxied", "", "*"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(p.stdout.lines())
			sample := fmt.Sprintf("robotsproxy_client_refusals_total{cause=%q}", c.cause)
			before := scrapeMetrics(t, p.adminAddr)[sample]
			raw, closed := rawExchange(t, p.proxyAddr, c.req, 5*time.Second)
			if rawStatus(raw) != c.status || !closed {
				t.Fatalf("got status %d (closed %v), want %d and the connection closed: %.100q", rawStatus(raw), closed, c.status, raw)
			}
			lines := p.auditLines(t, n+1)
			time.Sleep(100 * time.Millisecond) // room for a second line, which would be a bug
			if lines = p.auditLines(t, n+1); len(lines) != n+1 {
				t.Fatalf("audit: got %d new lines, want exactly 1: %v", len(lines)-n, lines[n:])
			}
			l := lines[n]
			if l["reason"] != c.reason || l["status"] != float64(c.status) || l["url"] != c.url {
				t.Errorf("audit line: got reason %v status %v url %.60q, want %s %d %.60q", l["reason"], l["status"], l["url"], c.reason, c.status, c.url)
			}
			if c.cause != "" {
				if got := scrapeMetrics(t, p.adminAddr)[sample] - before; got != 1 {
					t.Errorf("%s: got +%v, want +1", sample, got)
				}
			}
		})
	}
	t.Run("idle keep-alive closed", func(t *testing.T) {
		start := time.Now()
		raw, closed := rawExchange(t, p.proxyAddr, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 5*time.Second)
		if rawStatus(raw) != 400 || !closed || time.Since(start) > 3*time.Second {
			t.Errorf("keep-alive after one request: status %d, closed %v after %v; want closed after idle_timeout (500ms)", rawStatus(raw), closed, time.Since(start))
		}
		if got := scrapeMetrics(t, p.adminAddr)[`robotsproxy_client_refusals_total{cause="idle_timeout"}`]; got < 1 {
			t.Errorf("idle_timeout refusals: got %v, want at least 1", got)
		}
	})
	p.stop(t)
}

// TestShutdownCutsOffSlowRequests: SIGTERM while 50 requests wait on an
// origin slower than shutdown_timeout. Every client gets a 503, the proxy
// exits 0, and the audit file has exactly one valid line per request, with
// cut_off "shutdown" (the log is closed, drained, after the cut-off).
func TestShutdownCutsOffSlowRequests(t *testing.T) {
	const n = 50
	var arrived atomic.Int64
	release := make(chan struct{})
	var releaseOnce sync.Once
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		arrived.Add(1)
		select { // far longer than shutdown_timeout
		case <-release:
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer origin.Close()
	defer releaseOnce.Do(func() { close(release) })

	auditFile := filepath.Join(t.TempDir(), "audit.log")
	p := startProxy(t, "shutdown_timeout: 1s\nlog:\n  file: "+auditFile+"\n")
	statuses, bodies := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", p.proxyAddr)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			fmt.Fprintf(c, "GET %s/slow/%d HTTP/1.1\r\nHost: a\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", origin.URL, i)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			statuses[i], bodies[i] = resp.StatusCode, string(b)
		})
	}
	for deadline := time.Now().Add(20 * time.Second); arrived.Load() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := arrived.Load(); got != n {
		t.Fatalf("requests at the origin before SIGTERM: got %d, want %d", got, n)
	}
	start := time.Now()
	p.signal(t, syscall.SIGTERM)
	wg.Wait()
	p.wait(t, "SIGTERM")
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("shutdown took %v, want about shutdown_timeout (1s)", took)
	}
	bad := 0
	for i := range n {
		if statuses[i] != http.StatusServiceUnavailable || !strings.Contains(bodies[i], "shutting down") {
			if bad++; bad <= 3 {
				t.Errorf("request %d: got status %d body %q, want 503 saying the proxy is shutting down", i, statuses[i], bodies[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d requests got no 503", bad, n)
	}
	raw, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("audit log: got %d lines, want exactly %d", len(lines), n)
	}
	seen := map[string]bool{}
	for i, text := range lines {
		var l map[string]any
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatalf("audit line %d is not JSON (%v): %q", i+1, err, text)
		}
		url, _ := l["url"].(string)
		if seen[url] || !strings.HasPrefix(url, origin.URL+"/slow/") || l["cut_off"] != "shutdown" ||
			l["status"] != float64(503) || l["decision"] != "allow" || l["reason"] != "no-matching-rule" {
			t.Errorf("audit line: got %v, want one per request, status 503, decision allow, reason no-matching-rule, cut_off shutdown", l)
		}
		seen[url] = true
	}
}
