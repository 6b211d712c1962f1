package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptedOrigin answers /robots.txt with the next of robots (the last one
// repeats) and "origin:PATH" elsewhere.
func scriptedOrigin(t *testing.T, robots ...func(http.ResponseWriter)) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			i := min(int(n.Add(1))-1, len(robots)-1)
			robots[i](w)
			return
		}
		fmt.Fprintf(w, "origin:%s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func proxyClient(t *testing.T, addr string) *http.Client {
	t.Helper()
	u, _ := url.Parse("http://" + addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}, Timeout: 20 * time.Second}
}

func viaProxy(t *testing.T, c *http.Client, target, ua string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp.Body.Close()
	return resp
}

// TestStaleForZeroFailsClosed: "stale_for: 0s" is documented as
// disabling stale copies, and "min_ttl: 0s" as no minimum. Once
// robots.txt answers 500, the host is unreachable and completely
// disallowed at once (RFC 9309 2.3.1.4); the code used to turn both
// zeros into their defaults and keep allowing from the old copy.
func TestStaleForZeroFailsClosed(t *testing.T) {
	origin := scriptedOrigin(t,
		func(w http.ResponseWriter) {
			w.Header().Set("Cache-Control", "max-age=0")
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		},
		func(w http.ResponseWriter) { w.WriteHeader(500) },
	)
	p := startProxy(t, "cache:\n  min_ttl: 0s\n  stale_for: 0s\n")
	c := proxyClient(t, p.proxyAddr)
	if resp := viaProxy(t, c, origin.URL+"/page", "ExampleBot/1.0"); resp.StatusCode != 200 {
		t.Fatalf("first request: got %d, want 200", resp.StatusCode)
	}
	resp := viaProxy(t, c, origin.URL+"/page", "ExampleBot/1.0")
	if resp.StatusCode != 403 || resp.Header.Get("X-Robotsproxy-Reason") != "unreachable" {
		t.Errorf("after robots.txt turned 500: got %d %q, want 403 unreachable (no stale copy)",
			resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
	}
}

// TestOpenProxyRefusedAtStart: a listener beyond loopback with nobody
// pinned is an open proxy; serve refuses to start (exit 2) and says how
// to proceed.
func TestOpenProxyRefusedAtStart(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-listen", "0.0.0.0:0", "-admin-listen", ""},
		{"serve", "-listen", "127.0.0.1:0", "-admin-listen", "0.0.0.0:0"},
	} {
		_, stderr, code := runBinary(t, "", args...) // e2e/ has no config.yaml: the defaults
		if code != 2 || !strings.Contains(stderr, "allow_open_proxy") {
			t.Errorf("robotsproxy %q: exit %d, stderr %q; want exit 2 naming allow_open_proxy", args, code, stderr)
		}
	}
}

// TestAuditFieldsBounded: a long User-Agent is cut in the audit line and
// marked, so that no line can push earlier evidence out of the log.
func TestAuditFieldsBounded(t *testing.T) {
	origin := scriptedOrigin(t, func(w http.ResponseWriter) { fmt.Fprint(w, "User-agent: *\nDisallow: /private\n") })
	p := startProxy(t, "")
	c := proxyClient(t, p.proxyAddr)
	ua := "ExampleBot/1.0 " + strings.Repeat("x", 30000)
	viaProxy(t, c, origin.URL+"/private/"+strings.Repeat("p", 6000), ua)
	lines := p.auditLines(t, 1)
	raw := p.stdout.lines()
	l := lines[len(lines)-1]
	if len(raw[len(raw)-1]) > 64<<10 || l["user_agent_truncated"] != true || l["user_agent_length"] != float64(len(ua)) ||
		l["url_truncated"] != true || l["decision"] != "deny" {
		t.Errorf("audit line of %d octets: user_agent_truncated %v, user_agent_length %v, url_truncated %v, decision %v; "+
			"want at most 64 KiB, true, %d, true, deny", len(raw[len(raw)-1]), l["user_agent_truncated"], l["user_agent_length"],
			l["url_truncated"], l["decision"], len(ua))
	}
}

// TestAuditSurvivesSIGKILL kills the proxy with SIGKILL under load with
// large audit lines and restarts it on the same log. Every line is whole
// JSON but at most the one the kill cut, the line after a cut starts on a
// line of its own, and the lines written before the kill account for
// every response the clients saw, but for the requests in flight.
func TestAuditSurvivesSIGKILL(t *testing.T) {
	origin := scriptedOrigin(t, func(w http.ResponseWriter) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.log")
	// A log left by an earlier crash: its last line was cut.
	const cut = `{"decision":"deny","url":"http://x/cut-by-an-earlier-cras`
	if err := os.WriteFile(logPath, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("log:\n  file: %q\n  max_field_bytes: 4096\n", logPath)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "", "-config", cfg)
	c := proxyClient(t, p.proxyAddr)
	const workers = 8
	var answered atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ua := fmt.Sprintf("Worker%dBot/1.0 %s", w, strings.Repeat("u", 20000))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s/w%d/%d", origin.URL, w, i), nil)
				req.Header.Set("User-Agent", ua)
				resp, err := c.Do(req)
				if err != nil {
					return // the kill
				}
				resp.Body.Close()
				answered.Add(1)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	p.signal(t, os.Kill)
	<-p.exited
	seen := answered.Load()
	close(stop)
	wg.Wait()
	before := readLines(t, logPath)

	p = startServe(t, "", "-config", cfg)
	c = proxyClient(t, p.proxyAddr)
	for i := range 3 {
		viaProxy(t, c, fmt.Sprintf("%s/after/%d", origin.URL, i), "AfterBot/1.0")
	}
	p.stop(t)
	all := readLines(t, logPath)

	if string(all[0]) != cut {
		t.Errorf("line 1 = %.80q...; want the earlier crash's cut line alone, with nothing appended to it", all[0])
	}
	bad := 0
	for i, l := range all {
		if !json.Valid(l) {
			bad++
			if i == 0 {
				continue // the earlier crash's cut line
			}
			if i+1 < len(all) && !json.Valid(all[i+1]) {
				t.Errorf("line %d after the cut line %d is ruined too", i+2, i+1)
			}
		}
	}
	if bad > 2 {
		t.Errorf("%d lines are not whole JSON; want at most 2 (the earlier crash's and this kill's)", bad)
	}
	written := int64(len(before) - 1) // less the earlier crash's line
	if written < seen-workers {
		t.Errorf("%d lines written before the kill, clients saw %d answers; want at least %d (at most %d in flight)",
			written, seen, seen-workers, workers)
	}
	if got := len(all) - len(before); got != 3 {
		t.Errorf("after the restart: %d new lines, want 3", got)
	}
	var last map[string]any
	if err := json.Unmarshal(all[len(all)-1], &last); err != nil || last["user_agent"] != "AfterBot/1.0" {
		t.Errorf("last line %q: want the restarted proxy's whole line", all[len(all)-1])
	}
	t.Logf("SIGKILL under load: clients saw %d answers, %d lines were written, %d lines not JSON", seen, written, bad)
}

// readLines returns the lines of a file.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}
