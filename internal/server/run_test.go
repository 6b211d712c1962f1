package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// slowOrigin answers /robots.txt at once and every other path after delay
// (or when the proxy gives up).
func slowOrigin(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		select {
		case <-time.After(delay):
			_, _ = io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// getAll sends n concurrent GETs of url through the proxy at addr and
// returns their statuses (0: no response) once all ended.
func getAll(addr, url string, n int) func() []int {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			fmt.Fprintf(c, "GET %s/%d HTTP/1.1\r\nHost: a\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", url, i)
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	return func() []int { wg.Wait(); return statuses }
}

// TestShutdown: requests that end within shutdown_timeout complete as
// usual; those that do not are cut off with 503 and audited with cut_off
// "shutdown", a request still being sent is audited as cut off, and the
// shutdown takes about shutdown_timeout, not the origin's time.
func TestShutdown(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		delay   time.Duration
		status  int
		cutOff  any
	}{
		{"requests finish in time", 5 * time.Second, 300 * time.Millisecond, 200, nil},
		{"requests cut off", 300 * time.Millisecond, time.Minute, 503, "shutdown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const n = 5
			o := slowOrigin(t, c.delay)
			ts := startServer(t, func(cfg *config.Config) { cfg.ShutdownTimeout = c.timeout })
			wait := getAll(ts.addr, o.URL+"/page", n)
			partial, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer partial.Close()
			fmt.Fprint(partial, "GET "+o.URL+"/unfinished HTTP/1.1\r\nHost: a\r\n")
			// Shutdown must find the partial request's octets read, or it
			// has nothing to audit: wait for them as for the n requests.
			for deadline := time.Now().Add(5 * time.Second); (ts.s.proxy.InFlight() < n ||
				!ts.s.conns.Load().received("/unfinished")) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			start := time.Now()
			if err := ts.stop(); err != nil {
				t.Errorf("serve: got error %v, want nil", err)
			}
			if took := time.Since(start); took > c.timeout+2*time.Second {
				t.Errorf("shutdown took %v, want about %v", took, min(c.timeout, c.delay))
			}
			for i, s := range wait() {
				if s != c.status {
					t.Errorf("request %d: got status %d, want %d", i, s, c.status)
				}
			}
			lines := ts.audit.Lines(t)
			byURL := map[string]map[string]any{}
			for _, l := range lines {
				byURL[l["url"].(string)] = l
			}
			for i := range n {
				l := byURL[o.URL+"/page/"+strconv.Itoa(i)]
				if l == nil || l["status"] != float64(c.status) || l["cut_off"] != c.cutOff {
					t.Errorf("audit line of request %d: got %v, want status %d cut_off %v", i, l, c.status, c.cutOff)
				}
			}
			if l := byURL[o.URL+"/unfinished"]; l == nil || l["reason"] != "shutdown" || l["status"] != float64(0) {
				t.Errorf("audit line of the unfinished request: got %v, want reason shutdown, status 0", l)
			}
			if len(lines) != n+1 {
				t.Errorf("audit: got %d lines, want %d", len(lines), n+1)
			}
		})
	}
}

// TestShutdownClosesTunnels: a CONNECT tunnel (a hijacked connection the
// HTTP server no longer tracks) is closed when serve returns.
func TestShutdownClosesTunnels(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	port := echo.Addr().(*net.TCPAddr).Port
	ts := startServer(t, func(c *config.Config) {
		c.Connect.Ports = []int{port}
		c.ExemptHosts = []string{"127.0.0.1"}
		c.MITM.Mode = config.MITMHostLevel // an opaque tunnel to the echo server
	})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: got %v, %v; want 200", resp, err)
	}
	fmt.Fprint(c, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("tunnel echo: got %q, %v", buf, err)
	}
	if err := ts.stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := br.Read(buf); err != io.EOF {
		t.Errorf("tunnel after shutdown: read %d octets, error %v; want EOF (closed)", n, err)
	}
	if got := ts.metric(t, "robotsproxy_client_connections"); got != 0 {
		t.Errorf("robotsproxy_client_connections after shutdown: got %v, want 0", got)
	}
}
