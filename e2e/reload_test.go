package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// reloadBase starts every configuration of these tests: ephemeral loopback
// listeners, set in the file (no flags), so that a listen change in the
// file is a change.
const reloadBase = "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nallow_private: true\n"

// reloadProcess is "robotsproxy serve -config FILE" whose FILE a test
// rewrites before sending SIGHUP.
type reloadProcess struct {
	*proxyProcess
	path string
}

func startReloadable(t *testing.T, yaml string) *reloadProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	rp := &reloadProcess{path: path}
	rp.write(t, yaml)
	rp.proxyProcess = startBinary(t, "", nil, "serve", "-config", path)
	return rp
}

// write writes reloadBase, without the keys yaml sets, then yaml.
func (rp *reloadProcess) write(t *testing.T, yaml string) {
	t.Helper()
	var text strings.Builder
	for _, line := range strings.SplitAfter(reloadBase, "\n") {
		if key, _, ok := strings.Cut(line, ":"); ok && !strings.Contains("\n"+yaml, "\n"+key+":") {
			text.WriteString(line)
		}
	}
	text.WriteString(yaml)
	if err := os.WriteFile(rp.path, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload writes yaml, sends SIGHUP and returns the log line that reports
// the outcome ("configuration reloaded" or "configuration reload
// refused"), and the warning about restart-only keys if there is one.
func (rp *reloadProcess) reload(t *testing.T, yaml string) (outcome, restart map[string]any) {
	t.Helper()
	before := len(rp.logLines(t))
	if yaml != "" {
		rp.write(t, yaml)
	}
	rp.signal(t, syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		lines := rp.logLines(t)
		for i := before; i < len(lines); i++ {
			switch msg, _ := lines[i]["message"].(string); {
			case msg == "configuration reloaded" || msg == "configuration reload refused: the running configuration stays":
				outcome = lines[i]
			case strings.HasPrefix(msg, "configuration reload: these keys take effect only after a restart"):
				restart = lines[i]
			}
		}
		if outcome != nil {
			return outcome, restart
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no reload outcome logged within 10s after SIGHUP; stderr:\n%s", rp.stderr)
	return nil, nil
}

// logLines returns the operational log (stderr) decoded.
func (rp *reloadProcess) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range rp.stderr.lines() {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// get sends GET url through the proxy on a new connection and returns
// "STATUS REASON" ("403 host-denied"; "200 " when forwarded).
func (rp *reloadProcess) get(t *testing.T, url string) string {
	t.Helper()
	c, err := net.Dial("tcp", rp.proxyAddr)
	if err != nil {
		t.Fatalf("dial the proxy at %s: %v", rp.proxyAddr, err)
	}
	defer c.Close()
	return getOn(t, c, bufio.NewReader(c), url)
}

// getOn sends GET url on c and returns its outcome (see get).
func getOn(t *testing.T, c net.Conn, br *bufio.Reader, url string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", url)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
}

// admin GETs path on the admin listener: "STATUS BODY".
func (rp *reloadProcess) admin(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + rp.adminAddr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

// TestReloadSIGHUP: the real binary reloads its configuration file on
// SIGHUP without stopping: a host list change takes effect, a broken file
// is refused with its key logged and the old configuration kept, a listen
// change is reported as needing a restart while the rest applies, and a
// missing file is refused. robots.txt is fetched once across reloads (the
// cache is kept), and the process still exits 0 on SIGTERM.
func TestReloadSIGHUP(t *testing.T) {
	var fetches atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fetches.Add(1)
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		_, _ = io.WriteString(w, "page")
	}))
	defer origin.Close()
	cases := []struct {
		name, start, reload string
		remove              bool // remove the file instead of writing reload
		path, before, after string
		outcome             string // "reloaded" or "refused"
		logged              []string
		restartKeys         string
	}{
		{name: "host list change takes effect", reload: "deny_hosts: [127.0.0.1]\n", path: "/page",
			before: "200 ", after: "403 host-denied", outcome: "reloaded", logged: []string{`"changed":["deny_hosts"]`}},
		{name: "broken config keeps the old one, the key is logged", start: "deny_hosts: [127.0.0.1]\n",
			reload: "deny_hosts: [\"bad/host\"]\n", path: "/page", before: "403 host-denied", after: "403 host-denied",
			outcome: "refused", logged: []string{`"level":"error"`, `deny_hosts[0]`}},
		{name: "listen change needs a restart, the rest applies", reload: "listen: 127.0.0.1:1\nmode: report\n",
			path: "/private", before: "403 rule", after: "200 ", outcome: "reloaded",
			logged: []string{`"changed":["mode"]`}, restartKeys: `["listen"]`},
		{name: "missing file is refused", start: "deny_hosts: [127.0.0.1]\n", remove: true, path: "/page",
			before: "403 host-denied", after: "403 host-denied", outcome: "refused", logged: []string{"no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fetches.Store(0)
			rp := startReloadable(t, c.start)
			if got := rp.admin(t, "/readyz"); got != "200 ready\n" {
				t.Errorf("/readyz: got %q, want \"200 ready\\n\"", got)
			}
			if got := rp.get(t, origin.URL+c.path); got != c.before {
				t.Fatalf("before SIGHUP: got %q, want %q", got, c.before)
			}
			if c.remove {
				if err := os.Remove(rp.path); err != nil {
					t.Fatal(err)
				}
			}
			outcome, restart := rp.reload(t, c.reload)
			line, _ := json.Marshal(outcome)
			if want := map[string]string{"reloaded": "configuration reloaded",
				"refused": "configuration reload refused: the running configuration stays"}[c.outcome]; outcome["message"] != want {
				t.Errorf("reload: got %s, want message %q", line, want)
			}
			for _, want := range c.logged {
				if !strings.Contains(string(line), want) {
					t.Errorf("reload log line %s: want %s in it", line, want)
				}
			}
			if got, _ := json.Marshal(restart["keys"]); c.restartKeys != "" && string(got) != c.restartKeys {
				t.Errorf("restart-only keys logged: got %s, want %s (stderr:\n%s)", got, c.restartKeys, rp.stderr)
			}
			if got := rp.get(t, origin.URL+c.path); got != c.after {
				t.Errorf("after SIGHUP: got %q, want %q", got, c.after)
			}
			if got := fetches.Load(); got > 1 {
				t.Errorf("robots.txt fetches: got %d, want at most 1 (the cache survives reloads)", got)
			}
			metric := map[string]string{"reloaded": `robotsproxy_config_reloads_total{result="applied"} 1`,
				"refused": `robotsproxy_config_reloads_total{result="refused"} 1`}[c.outcome]
			if got := rp.admin(t, "/metrics"); !strings.Contains(got, metric) {
				t.Errorf("/metrics: want %q", metric)
			}
			rp.stop(t)
		})
	}
}

// TestReloadKeepsInFlight: SIGHUP while a request waits on a slow origin,
// a keep-alive connection is idle and a CONNECT tunnel is open. The
// request completes with the origin's response, the keep-alive
// connection's next request is decided by the new configuration, and the
// tunnel still carries data.
func TestReloadKeepsInFlight(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/slow":
			arrived <- struct{}{}
			<-release
			_, _ = io.WriteString(w, "slow page")
		default:
			_, _ = io.WriteString(w, "page")
		}
	}))
	defer origin.Close()
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll() // before origin.Close, which waits for the handler
	echo := testkit.Echo(t)
	port := echo.Addr().(*net.TCPAddr).Port
	rp := startReloadable(t, fmt.Sprintf("exempt_hosts: [127.0.0.1]\nconnect:\n  ports: [%d]\nmitm:\n  mode: host-level\n", port)) // an opaque tunnel to the echo server

	slow := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustParse(t, "http://"+rp.proxyAddr))},
			Timeout: 30 * time.Second}).Get(origin.URL + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	keep, err := net.Dial("tcp", rp.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	keepR := bufio.NewReader(keep)
	if got := getOn(t, keep, keepR, origin.URL+"/page"); got != "200 " {
		t.Fatalf("keep-alive connection before SIGHUP: got %q, want \"200 \"", got)
	}
	tunnel, err := net.Dial("tcp", rp.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer tunnel.Close()
	_ = tunnel.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(tunnel, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	tunnelR := bufio.NewReader(tunnel)
	if resp, err := http.ReadResponse(tunnelR, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: got %v, %v; want 200", resp, err)
	}
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow request did not reach the origin")
	}

	outcome, _ := rp.reload(t, "deny_hosts: [127.0.0.1]\nconnect:\n  refuse: true\n")
	if outcome["message"] != "configuration reloaded" {
		t.Fatalf("reload: got %v, want it applied", outcome)
	}
	if got := getOn(t, keep, keepR, origin.URL+"/page"); got != "403 host-denied" {
		t.Errorf("keep-alive connection after SIGHUP: got %q, want \"403 host-denied\"", got)
	}
	fmt.Fprint(tunnel, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(tunnelR, buf); err != nil || string(buf) != "ping" {
		t.Errorf("tunnel opened before SIGHUP: got %q, %v; want the echo \"ping\"", buf, err)
	}
	releaseAll()
	if got := <-slow; got != "200 slow page" {
		t.Errorf("request in flight during SIGHUP: got %q, want \"200 slow page\"", got)
	}
	rp.stop(t)
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
