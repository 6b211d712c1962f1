package proxy_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

const exampleRobots = "User-agent: ExampleBot\nDisallow: /private\n\nUser-agent: *\nDisallow: /nobody\n"

// redirectChain returns a /robots.txt handler that reaches the rules after
// n consecutive redirects, the later ones on another authority.
func redirectChain(t *testing.T, n int, body string) http.HandlerFunc {
	hops := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var k int
		fmt.Sscanf(r.URL.Path, "/hop/%d", &k)
		if k < n {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", k+1), http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(hops.Close)
	return func(w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			_, _ = w.Write([]byte(body))
			return
		}
		http.Redirect(w, r, hops.URL+"/hop/1", http.StatusMovedPermanently)
	}
}

// TestAccessResults drives every access result of RFC 9309 2.3.1 through
// the proxy: what the crawler gets, and whether the origin saw the request.
func TestAccessResults(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	cases := []struct {
		name    string
		robots  func(t *testing.T) http.HandlerFunc
		status  int
		reason  string
		access  string
		robotsS int
		cause   string // X-Robotsproxy-Unreachable and unreachable_cause
	}{
		{"200 rules deny", func(*testing.T) http.HandlerFunc { return serveRobots(exampleRobots) }, 403, "rule", "successful", 200, ""},
		{"3 redirects", func(t *testing.T) http.HandlerFunc { return redirectChain(t, 3, exampleRobots) }, 403, "rule", "successful", 200, ""},
		{"5 redirects", func(t *testing.T) http.HandlerFunc { return redirectChain(t, 5, exampleRobots) }, 403, "rule", "successful", 200, ""},
		{"6 redirects unavailable", func(t *testing.T) http.HandlerFunc { return redirectChain(t, 6, exampleRobots) }, 200, "unavailable", "unavailable", 0, ""},
		{"404 unavailable", func(*testing.T) http.HandlerFunc { return statusRobots(404) }, 200, "unavailable", "unavailable", 404, ""},
		{"401 unavailable", func(*testing.T) http.HandlerFunc { return statusRobots(401) }, 200, "unavailable", "unavailable", 401, ""},
		{"429 unreachable", func(*testing.T) http.HandlerFunc { return statusRobots(429) }, 403, "unreachable", "unreachable", 429, "status 429"},
		{"500 unreachable", func(*testing.T) http.HandlerFunc { return statusRobots(500) }, 403, "unreachable", "unreachable", 500, "status 500"},
		{"503 unreachable", func(*testing.T) http.HandlerFunc { return statusRobots(503) }, 403, "unreachable", "unreachable", 503, "status 503"},
		{"never answers", func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-never:
				case <-r.Context().Done():
				}
			}
		}, 403, "unreachable", "unreachable", 0, "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{fetchTimeout: 300 * time.Millisecond})
			o := newOrigin(t, c.robots(t))
			resp, body := h.do(t, "GET", o.URL+"/private/page", "Mozilla/5.0 (compatible; ExampleBot/1.0)", "")
			if resp.StatusCode != c.status {
				t.Fatalf("got status %d, want %d; body %q", resp.StatusCode, c.status, body)
			}
			wantHits := 1
			if c.status == 403 {
				wantHits = 0
				if got := resp.Header.Get(proxy.HeaderReason); got != c.reason {
					t.Errorf("got %s %q, want %q", proxy.HeaderReason, got, c.reason)
				}
				if got := resp.Header.Get(proxy.HeaderRobotsURL); got != o.URL+"/robots.txt" {
					t.Errorf("got %s %q, want %q", proxy.HeaderRobotsURL, got, o.URL+"/robots.txt")
				}
				if got := resp.Header.Get(proxy.HeaderUnreachable); got != c.cause {
					t.Errorf("got %s %q, want %q", proxy.HeaderUnreachable, got, c.cause)
				}
				if c.cause != "" && !strings.Contains(body, "is unreachable ("+c.cause+": ") {
					t.Errorf("got body %q, want it to give the cause %q", body, c.cause)
				}
			} else if body != "origin:GET:/private/page" {
				t.Errorf("got body %q, want the origin's", body)
			}
			if got := o.Count("/private/page"); got != wantHits {
				t.Errorf("origin saw /private/page %d times, want %d", got, wantHits)
			}
			line := lastLine(t, h)
			want := map[string]any{"reason": c.reason, "access_result": c.access, "status": float64(c.status), "product_token": "ExampleBot"}
			if c.robotsS != 0 {
				want["robots_status"] = float64(c.robotsS)
			}
			if c.cause != "" {
				want["unreachable_cause"] = c.cause
			} else if _, ok := line["unreachable_cause"]; ok {
				t.Errorf("audit line has unreachable_cause %v, want none", line["unreachable_cause"])
			}
			assertFields(t, line, want)
			if got := h.counter(t, "robotsproxy_robots_fetches_total", c.access); got != 1 {
				t.Errorf("robotsproxy_robots_fetches_total{result=%q} = %v, want 1", c.access, got)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	resp, body := h.do(t, "GET", "http://"+addr+"/page", "ExampleBot/1.0", "")
	if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "unreachable" || resp.Header.Get(proxy.HeaderUnreachable) != "connect" {
		t.Fatalf("got %d %q cause %q, want 403 unreachable cause connect", resp.StatusCode, resp.Header.Get(proxy.HeaderReason), resp.Header.Get(proxy.HeaderUnreachable))
	}
	if !strings.Contains(body, "is unreachable (connect: the connection to the origin failed)") {
		t.Errorf("got body %q, want it to say the connection failed", body)
	}
	assertFields(t, lastLine(t, h), map[string]any{"decision": "deny", "access_result": "unreachable", "unreachable_cause": "connect"})
}

func TestDecisions(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	o := newOrigin(t, serveRobots(exampleRobots))
	cases := []struct {
		method, path, ua string
		status           int
		reason, rule     string
	}{
		{"GET", "/private/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"POST", "/private/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"PUT", "/private/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"DELETE", "/private/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"HEAD", "/private/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"GET", "/%70rivate/x", "ExampleBot/1.0", 403, "rule", "line 2: Disallow: /private"},
		{"GET", "/public", "ExampleBot/1.0", 200, "no-matching-rule", ""},
		{"GET", "/nobody", "ExampleBot/1.0", 200, "no-matching-rule", ""},
		{"GET", "/nobody", "OtherBot/2.0", 403, "rule", "line 5: Disallow: /nobody"},
		{"GET", "/nobody", "", 403, "rule", "line 5: Disallow: /nobody"},
		{"GET", "/private/x", "", 200, "no-matching-rule", ""},
		{"GET", "/robots.txt", "ExampleBot/1.0", 200, "implicit-robots-txt", ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+c.ua, func(t *testing.T) {
			before := o.Count(strings.Split(c.path, "?")[0])
			resp, _ := h.do(t, c.method, o.URL+c.path, c.ua, "payload")
			if resp.StatusCode != c.status {
				t.Fatalf("got %d, want %d", resp.StatusCode, c.status)
			}
			if got := resp.Header.Get(proxy.HeaderRule); got != c.rule {
				t.Errorf("got %s %q, want %q", proxy.HeaderRule, got, c.rule)
			}
			after := o.Count(strings.Split(c.path, "?")[0])
			if c.status == 403 && after != before {
				t.Errorf("denied request reached the origin")
			}
			assertFields(t, lastLine(t, h), map[string]any{"method": c.method, "reason": c.reason, "status": float64(c.status)})
		})
	}
	if n := o.RobotsHits(); n != 2 { // once by the proxy, once by the crawler itself
		t.Errorf("origin served robots.txt %d times, want 2 (one proxy fetch, one crawler request)", n)
	}
}

// TestForwardUnchanged checks that an allowed request and its response pass
// unchanged: body, headers, Accept-Encoding.
func TestForwardUnchanged(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var got http.Header
	var gotBody string
	o := newOrigin(t, serveRobots("User-agent: *\nDisallow: /x\n"))
	o.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /x\n"))
			return
		}
		got = r.Header.Clone()
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, r.ContentLength)
		buf := make([]byte, 64)
		n, _ := r.Body.Read(buf)
		gotBody = string(buf[:n])
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("X-Custom", "kept")
		_, _ = w.Write([]byte("compressed-bytes"))
	})
	req, _ := http.NewRequest("POST", o.URL+"/form", strings.NewReader("a=1&b=2"))
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	req.Header.Set("Accept-Encoding", "gzip, br")
	req.Header.Set("X-Client", "abc")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	if resp.StatusCode != 200 || string(buf[:n]) != "compressed-bytes" || resp.Header.Get("X-Custom") != "kept" {
		t.Errorf("got %d %q X-Custom=%q, want 200 the origin's bytes and headers", resp.StatusCode, buf[:n], resp.Header.Get("X-Custom"))
	}
	if gotBody != "a=1&b=2" || got.Get("Accept-Encoding") != "gzip, br" || got.Get("X-Client") != "abc" || got.Get("User-Agent") != "ExampleBot/1.0" {
		t.Errorf("origin got body %q headers %v, want them unchanged", gotBody, got)
	}
}

func TestCacheHit(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	o := newOrigin(t, serveRobots(exampleRobots))
	h.do(t, "GET", o.URL+"/a", "ExampleBot/1.0", "")
	h.do(t, "GET", o.URL+"/b", "OtherBot/1.0", "")
	lines := h.audit.Lines(t)
	if len(lines) != 2 || lines[0]["cache"] != "miss" || lines[1]["cache"] != "hit" {
		t.Fatalf("got cache states %v, %v; want miss then hit", lines[0]["cache"], lines[1]["cache"])
	}
	if n := o.RobotsHits(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
}

// TestConcurrentColdRequests: 200 concurrent requests to a host whose
// robots.txt is not cached make exactly one robots.txt fetch.
func TestConcurrentColdRequests(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	release := make(chan struct{})
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-release // hold the fetch until every request is waiting
		_, _ = w.Write([]byte(exampleRobots))
	})
	const n = 200
	var wg sync.WaitGroup
	codes := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/public"
			if i%2 == 0 {
				path = "/private/x"
			}
			req, _ := http.NewRequest("GET", o.URL+path, nil)
			req.Header.Set("User-Agent", "ExampleBot/1.0")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}(i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for o.RobotsHits() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let the rest queue behind the fetch
	close(release)
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] != n/2 || count[403] != n/2 {
		t.Errorf("got status counts %v, want %d of 200 and of 403", count, n/2)
	}
	if got := o.RobotsHits(); got != 1 {
		t.Errorf("robots.txt fetched %d times for %d concurrent cold requests, want 1", got, n)
	}
	if got := h.fetches.Load(); got != 1 {
		t.Errorf("policy fetched %d times, want 1", got)
	}
}

func TestPrivateDestinationRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{guard: &netguard.Guard{}})
	o := newOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	resp, body := h.do(t, "GET", o.URL+"/x", "ExampleBot/1.0", "")
	if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "destination-refused" {
		t.Fatalf("got %d %q %q, want 403 destination-refused", resp.StatusCode, resp.Header.Get(proxy.HeaderReason), body)
	}
	if o.RobotsHits() != 0 || o.Count("/x") != 0 {
		t.Errorf("the refused origin was contacted")
	}
}

// TestConnect: CONNECT gets a host-level decision, and a refusal is a real
// HTTP 403 response, not a closed socket.
func TestConnect(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: BlockedBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"))
	tlsCfg := o.Client().Transport.(*http.Transport).TLSClientConfig
	h := newHarness(t, harnessOptions{tls: tlsCfg, policy: connectPorts(o)})
	cases := []struct {
		ua     string
		status int
	}{
		{"BlockedBot/1.0", 403},
		{"ExampleBot/1.0", 200},
	}
	for _, c := range cases {
		t.Run(c.ua, func(t *testing.T) {
			conn, err := net.Dial("tcp", h.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			host := strings.TrimPrefix(o.URL, "https://")
			fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n\r\n", host, host, c.ua)
			resp, err := http.ReadResponse(bufioReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the CONNECT reply: %v", err)
			}
			if resp.StatusCode != c.status {
				t.Fatalf("got %d, want %d", resp.StatusCode, c.status)
			}
			if c.status == 403 && resp.Header.Get(proxy.HeaderReason) != "rule" {
				t.Errorf("got reason %q, want rule", resp.Header.Get(proxy.HeaderReason))
			}
		})
	}
	// An allowed tunnel carries a real TLS request to the origin.
	resp, body := h.do(t, "GET", o.URL+"/page", "ExampleBot/1.0", "")
	if resp.StatusCode != 200 || body != "origin:GET:/page" {
		t.Errorf("through the tunnel: got %d %q, want 200 origin body", resp.StatusCode, body)
	}
	if n := o.RobotsHits(); n != 1 {
		t.Errorf("robots.txt fetched over https %d times, want 1", n)
	}
}

func TestNonProxyRequest(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	resp, err := http.Get(h.proxyURL.String() + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("got %d, want 400 for a non-proxy request", resp.StatusCode)
	}
}

// connectPorts lets CONNECT reach the origins' ports.
func connectPorts(origins ...*origin) func(*policy.Options) {
	return func(o *policy.Options) {
		for _, or := range origins {
			u, _ := url.Parse(or.URL)
			port, _ := strconv.Atoi(u.Port())
			o.ConnectPorts = append(o.ConnectPorts, port)
		}
	}
}

// TestAuditTimeFromClock: an audit line's time and duration come from
// Options.Now (read once at the end for both), not from zerolog's global
// clock.
func TestAuditTimeFromClock(t *testing.T) {
	o := newOrigin(t, serveRobots("User-agent: *\nDisallow: /x\n"))
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	h := newHarness(t, harnessOptions{proxy: func(po *proxy.Options) { po.Now = func() time.Time { return at } }})
	for _, path := range []string{"/page", "/x"} {
		h.do(t, "GET", o.URL+path, "ExampleBot/1.0", "")
	}
	for _, l := range h.audit.WaitLines(t, 2) {
		if l["time"] != "2001-02-03T04:05:06Z" || l["duration_ms"] != 0.0 {
			t.Errorf("audit line %v: want time 2001-02-03T04:05:06Z and duration_ms 0 from the proxy's clock", l)
		}
	}
}

// TestLineBeforeAnswer: the line of a plain-HTTP request is written
// before the last octet of its answer reaches the client, whether the
// body is small (sent when the handler returns), large with a length
// (sent while it is copied) or chunked.
func TestLineBeforeAnswer(t *testing.T) {
	o := newOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h := newHarness(t, harnessOptions{})
	h.audit.Delay.Store(int64(2 * time.Millisecond)) // a late line is seen late
	for i, path := range []string{"/page", "/big/x", "/chunked/page", "/big/y", "/page"} {
		resp, body := h.do(t, "GET", o.URL+path, "ExampleBot/1.0", "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: got %d, want 200", path, resp.StatusCode)
		}
		lines := h.audit.Lines(t)
		if len(lines) != i+1 {
			t.Fatalf("%s: after %d answers the audit log has %d lines", path, i+1, len(lines))
		}
		if l := lines[i]; l["url"] != o.URL+path || l["bytes"] != float64(len(body)) {
			t.Errorf("%s: audit line %v: want this request's, with bytes %d", path, l, len(body))
		}
	}
}

// TestShortBodyLine: a body that ends before its declared length is no
// whole answer; its one line is written when the handler returns, with
// the octets sent.
func TestShortBodyLine(t *testing.T) {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 262144\r\n\r\n")
		_, _ = buf.Write(bytes.Repeat([]byte("x"), 100<<10)) // then the origin hangs up
		_ = buf.Flush()
	}))
	t.Cleanup(o.Close)
	h := newHarness(t, harnessOptions{})
	req, _ := http.NewRequest("GET", o.URL+"/short", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	if resp, err := h.client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	lines := h.audit.WaitLines(t, 1)
	time.Sleep(50 * time.Millisecond) // a second line would come now
	if lines = h.audit.Lines(t); len(lines) != 1 {
		t.Fatalf("got %d audit lines, want 1: %v", len(lines), lines)
	}
	if b, _ := lines[0]["bytes"].(float64); b <= 0 || b >= 262144 {
		t.Errorf("audit line %v: want the octets sent, fewer than declared", lines[0])
	}
}
