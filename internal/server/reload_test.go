package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// reloadServer is a Server whose configuration file can be rewritten and
// reloaded, as SIGHUP does.
type reloadServer struct {
	*testServer
	path   string
	reload chan os.Signal
}

// startReloadServer writes yaml (after "allow_private: true" and no admin
// listener) to a file, and serves New(that file) on a loopback listener
// with reloads from it.
func startReloadServer(t *testing.T, yaml string) *reloadServer {
	t.Helper()
	rs := &reloadServer{path: filepath.Join(t.TempDir(), "config.yaml"), reload: make(chan os.Signal, 1)}
	rs.write(t, yaml)
	cfg, err := config.LoadFile(rs.path)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{audit: &testkit.AuditSink{}, log: &testkit.AuditSink{}}
	if ts.s, err = New(cfg, ts.audit, zerolog.New(ts.log)); err != nil {
		t.Fatal(err)
	}
	ts.s.run = RunOptions{Reload: rs.reload, Load: func() (config.Config, error) { return config.LoadFile(rs.path) }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.s.serve(ctx, ln, nil) }()
	var once sync.Once
	var serveErr error
	ts.stop = func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { _ = ts.stop() })
	rs.testServer = ts
	return rs
}

func (rs *reloadServer) write(t *testing.T, yaml string) {
	t.Helper()
	if err := os.WriteFile(rs.path, []byte("allow_private: true\nadmin_listen: \"\"\n"+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reloadWith writes yaml, sends a reload and waits until it is applied or
// refused; it returns "applied" or "refused".
func (rs *reloadServer) reloadWith(t *testing.T, yaml string) string {
	t.Helper()
	rs.write(t, yaml)
	applied := rs.metric(t, `robotsproxy_config_reloads_total{result="applied"}`)
	refused := rs.metric(t, `robotsproxy_config_reloads_total{result="refused"}`)
	rs.reload <- syscall.SIGHUP
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		switch {
		case rs.metric(t, `robotsproxy_config_reloads_total{result="applied"}`) > applied:
			return "applied"
		case rs.metric(t, `robotsproxy_config_reloads_total{result="refused"}`) > refused:
			return "refused"
		}
	}
	t.Fatalf("reload: neither applied nor refused within 5s; log:\n%s", rs.log.String())
	return ""
}

// logText returns the operational log so far.
func (rs *reloadServer) logText() string {
	return rs.log.String()
}

// reloadOrigin serves "User-agent: *\nDisallow: /private" and counts the
// robots.txt fetches.
func reloadOrigin(t *testing.T) *testkit.Site {
	t.Helper()
	return testkit.NewSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "page")
	}))
}

// outcome sends GET url through the proxy at addr, on a new connection,
// and returns "STATUS REASON" ("403 host-denied"; "200 " when forwarded).
func outcome(t *testing.T, addr, url, header string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return exchangeOn(t, c, bufio.NewReader(c), url, header)
}

// exchangeOn sends GET url on c and returns its outcome (see outcome).
func exchangeOn(t *testing.T, c net.Conn, br *bufio.Reader, url, header string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\n%s\r\n", url, header)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
}

// TestReload: what a reload applies, refuses, and reports as needing a
// restart; the robots.txt cache survives it.
func TestReload(t *testing.T) {
	cases := []struct {
		name            string
		start, reload   string
		path            string
		before, after   string
		result          string
		log             []string // in the operational log after the reload
		fetches         int64
		pendingRestarts float64
	}{
		{name: "host list change takes effect", reload: "deny_hosts: [127.0.0.1]\n", path: "/page",
			before: "200 ", after: "403 host-denied", result: "applied", fetches: 1,
			log: []string{`"changed":["deny_hosts"]`, `"message":"configuration reloaded"`}},
		{name: "mode change takes effect", reload: "mode: report\n", path: "/private",
			before: "403 rule", after: "200 ", result: "applied", fetches: 1,
			log: []string{`"changed":["mode"]`}},
		{name: "broken value keeps the old configuration", start: "deny_hosts: [127.0.0.1]\n",
			reload: "deny_hosts: [\"bad/host\"]\n", path: "/page",
			before: "403 host-denied", after: "403 host-denied", result: "refused",
			log: []string{`"level":"error"`, "deny_hosts[0]", "configuration reload refused"}},
		{name: "any broken key refuses the whole file", reload: "exempt_hosts: [127.0.0.1]\ncache:\n  max_ttl: 48h\n",
			path: "/private", before: "403 rule", after: "403 rule", result: "refused", fetches: 1,
			log: []string{"cache.max_ttl", "configuration reload refused"}},
		{name: "unknown key", reload: "deny_hostz: [127.0.0.1]\n", path: "/page",
			before: "200 ", after: "200 ", result: "refused", fetches: 1,
			log: []string{"deny_hostz", "configuration reload refused"}},
		{name: "listen change needs a restart, the rest applies", reload: "listen: 127.0.0.1:1\ndeny_hosts: [127.0.0.1]\n",
			path: "/page", before: "200 ", after: "403 host-denied", result: "applied", fetches: 1, pendingRestarts: 1,
			log: []string{`"level":"warn"`, `"keys":["listen"]`, "take effect only after a restart"}},
		{name: "open proxy with the running listener is refused",
			start:  "listen: 0.0.0.0:8080\nidentity:\n  client_ranges: [{cidr: 127.0.0.0/8, token: SandboxBot}]\n",
			reload: "listen: 127.0.0.1:8080\n", path: "/page", before: "200 ", after: "200 ", result: "refused", fetches: 1,
			log: []string{"listen:", "open proxy", "checked with the running values of the restart-only keys listen"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := reloadOrigin(t)
			rs := startReloadServer(t, c.start)
			if got := outcome(t, rs.addr, o.URL+c.path, ""); got != c.before {
				t.Fatalf("before the reload: got %q, want %q", got, c.before)
			}
			if got := rs.reloadWith(t, c.reload); got != c.result {
				t.Errorf("reload: got %s, want %s; log:\n%s", got, c.result, rs.logText())
			}
			if got := outcome(t, rs.addr, o.URL+c.path, ""); got != c.after {
				t.Errorf("after the reload: got %q, want %q", got, c.after)
			}
			logText := rs.logText()
			for _, want := range c.log {
				if !strings.Contains(logText, want) {
					t.Errorf("log: want %q in:\n%s", want, logText)
				}
			}
			if got := o.RobotsHits(); got != c.fetches {
				t.Errorf("robots.txt fetches: got %d, want %d (the cache survives reloads)", got, c.fetches)
			}
			if got := rs.metric(t, "robotsproxy_config_restart_pending_keys"); got != c.pendingRestarts {
				t.Errorf("robotsproxy_config_restart_pending_keys: got %v, want %v", got, c.pendingRestarts)
			}
			wantOK := map[string]float64{"applied": 1, "refused": 0}[c.result]
			if got := rs.metric(t, "robotsproxy_config_last_reload_successful"); got != wantOK {
				t.Errorf("robotsproxy_config_last_reload_successful: got %v, want %v", got, wantOK)
			}
		})
	}
}

// TestReloadKeepsConnections: a request in flight during a reload
// completes; a keep-alive connection and a CONNECT tunnel opened before it
// stay open, and the connection's next request is decided by the new
// configuration.
func TestReloadKeepsConnections(t *testing.T) {
	release := make(chan struct{})
	var arrived atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/slow":
			arrived.Add(1)
			<-release
			_, _ = io.WriteString(w, "slow done")
		default:
			_, _ = io.WriteString(w, "page")
		}
	}))
	defer o.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	echo := testkit.Echo(t)
	port := echo.Addr().(*net.TCPAddr).Port
	rs := startReloadServer(t, fmt.Sprintf("connect:\n  ports: [%d]\nexempt_hosts: [127.0.0.1]\nmitm:\n  mode: host-level\n", port))

	slow := make(chan string, 1)
	go func() {
		c, err := net.Dial("tcp", rs.addr)
		if err != nil {
			slow <- err.Error()
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET %s/slow HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", o.URL)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		slow <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	keep, err := net.Dial("tcp", rs.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	keepR := bufio.NewReader(keep)
	if got := exchangeOn(t, keep, keepR, o.URL+"/page", ""); got != "200 " {
		t.Fatalf("keep-alive connection before the reload: got %q, want \"200 \"", got)
	}
	tunnel, tunnelR := openTunnel(t, rs.addr, port)
	defer tunnel.Close()
	for deadline := time.Now().Add(5 * time.Second); arrived.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}

	if got := rs.reloadWith(t, "deny_hosts: [127.0.0.1]\nconnect:\n  refuse: true\n"); got != "applied" {
		t.Fatalf("reload: got %s, want applied; log:\n%s", got, rs.logText())
	}
	if got := exchangeOn(t, keep, keepR, o.URL+"/page", ""); got != "403 host-denied" {
		t.Errorf("keep-alive connection after the reload: got %q, want \"403 host-denied\"", got)
	}
	fmt.Fprint(tunnel, "ping")
	buf := make([]byte, 4)
	_ = tunnel.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(tunnelR, buf); err != nil || string(buf) != "ping" {
		t.Errorf("tunnel opened before the reload: got %q, %v; want the echo \"ping\"", buf, err)
	}
	close(release)
	if got := <-slow; got != "200 slow done" {
		t.Errorf("request in flight during the reload: got %q, want \"200 slow done\"", got)
	}
}

// openTunnel opens a CONNECT tunnel to 127.0.0.1:port through the proxy.
func openTunnel(t *testing.T, addr string, port int) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: got %v, %v; want 200", resp, err)
	}
	return c, br
}

// TestReloadKeepsPinner: a reload that leaves the pinned identities and
// the throttle alone keeps the auth throttle's state (a throttled client
// stays throttled); one that changes identity.users starts afresh.
func TestReloadKeepsPinner(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := func(names ...string) string {
		s := "identity:\n  auth_throttle: {failures_per_minute: 0.001, burst: 1}\n  users:\n"
		for _, n := range names {
			s += fmt.Sprintf("    - {name: %s, password_bcrypt: %q, token: PartnerBot}\n", n, hash)
		}
		return s
	}
	wrong := "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("alice:wrong")) + "\r\n"
	cases := []struct {
		name, reload, after string
	}{
		{"host lists changed: throttle kept", users("alice") + "deny_hosts: [a.example]\n", "429 proxy-auth-throttled"},
		{"users changed: new pinner", users("alice", "bob"), "407 proxy-auth-failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := reloadOrigin(t)
			rs := startReloadServer(t, users("alice"))
			for i, want := range []string{"407 proxy-auth-failed", "429 proxy-auth-throttled"} {
				if got := outcome(t, rs.addr, o.URL+"/page", wrong); got != want {
					t.Fatalf("wrong password, attempt %d: got %q, want %q", i+1, got, want)
				}
			}
			if got := rs.reloadWith(t, c.reload); got != "applied" {
				t.Fatalf("reload: got %s, want applied; log:\n%s", got, rs.logText())
			}
			if got := outcome(t, rs.addr, o.URL+"/page", wrong); got != c.after {
				t.Errorf("wrong password after the reload: got %q, want %q", got, c.after)
			}
		})
	}
}
