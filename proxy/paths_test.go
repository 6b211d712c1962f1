package proxy_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// secretPath is the resource the tests' robots.txt disallows.
const secretPath = "/private/secret.txt"

// resolvingOrigin is an origin that normalises request targets the way
// lenient servers do: it unescapes the path (so "%2e" is "." and "%2F" is
// "/"), takes "\" for "/", cuts ";parameters" from each segment and cleans
// the result (empty and dot segments). It serves the secret at secretPath
// and records every request target it receives except /robots.txt.
type resolvingOrigin struct {
	*origin
	mu      sync.Mutex
	targets []string
}

func newResolvingOrigin(t *testing.T, robots string, useTLS bool) *resolvingOrigin {
	t.Helper()
	o := &resolvingOrigin{origin: &origin{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, robots)
			return
		}
		o.mu.Lock()
		o.targets = append(o.targets, r.RequestURI)
		o.mu.Unlock()
		if originResolve(r.RequestURI) == secretPath {
			_, _ = io.WriteString(w, "the secret")
			return
		}
		_, _ = io.WriteString(w, "page")
	})
	if useTLS {
		o.Server = httptest.NewTLSServer(h)
	} else {
		o.Server = httptest.NewServer(h)
	}
	t.Cleanup(o.Close)
	return o
}

// originResolve is what resolvingOrigin makes of a request target.
func originResolve(target string) string {
	p, _, _ := strings.Cut(target, "?")
	if dec, err := url.PathUnescape(p); err == nil {
		p = dec
	}
	segs := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return path.Clean("/" + strings.Join(segs, "/"))
}

func (o *resolvingOrigin) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.targets...)
}

// rawGet writes a request with target exactly as given on conn, so that no
// client normalises it, and reads the response.
func rawGet(t *testing.T, conn io.ReadWriter, target, host string) (*http.Response, string) {
	t.Helper()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// hostileSpellings name secretPath for resolvingOrigin without spelling it.
var hostileSpellings = []string{
	"/public/../private/secret.txt",
	"/./private/secret.txt",
	"//private/secret.txt",
	"/public/%2e%2e/private/secret.txt",
	"/public/%2E%2E/private/secret.txt",
	"/public/.%2e/private/secret.txt",
	"/public/%2E./private/secret.txt",
	"/public/..%2Fprivate/secret.txt",
	"/public/..%2fprivate/secret.txt",
	"/public/%2e%2e%2fprivate%2Fsecret.txt",
	`/public\..\private\secret.txt`,
	`/public/..\private/secret.txt`,
	"/public/..%5Cprivate/secret.txt",
	"/../private/secret.txt",
	"/public/..;/private/secret.txt",
	"/robots.txt/../private/secret.txt",
	"/private/./secret.txt?x=1",
	"/public#/../private/secret.txt", // "#" is forwarded as %23
}

// TestPathSpellingsDenied sends each spelling of a disallowed path as raw
// bytes through the proxy: 403 naming the rule, the origin never sees the
// request, and the audit line carries the target as sent.
func TestPathSpellingsDenied(t *testing.T) {
	const robotsTxt = "User-agent: *\nDisallow: /private\nAllow: /public\n"
	for _, target := range hostileSpellings {
		t.Run(target, func(t *testing.T) {
			if got := originResolve(target); got != secretPath {
				t.Fatalf("the origin resolves %q to %q, not %q: the case tests nothing", target, got, secretPath)
			}
			o := newResolvingOrigin(t, robotsTxt, false)
			h := newHarness(t, harnessOptions{})
			conn, err := net.Dial("tcp", h.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			abs := o.URL + target
			resp, body := rawGet(t, conn, abs, strings.TrimPrefix(o.URL, "http://"))
			if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "rule" {
				t.Fatalf("got %d %s=%q, want 403 rule; body %q", resp.StatusCode, proxy.HeaderReason, resp.Header.Get(proxy.HeaderReason), body)
			}
			if got, want := resp.Header.Get(proxy.HeaderRule), "line 2: Disallow: /private"; got != want {
				t.Errorf("got %s %q, want %q", proxy.HeaderRule, got, want)
			}
			if strings.Contains(body, "the secret") {
				t.Errorf("the 403 body carries the secret: %q", body)
			}
			if seen := o.seen(); len(seen) != 0 {
				t.Errorf("the origin saw %q, want no request", seen)
			}
			assertFields(t, h.audit.WaitLines(t, 1)[0], map[string]any{
				"url": abs, "decision": "deny", "reason": "rule", "rule": "Disallow: /private",
				"rule_line": 2.0, "status": 403.0, "product_token": "ExampleBot",
			})
		})
	}
}

// TestPathSpellingsAllowed: paths that merely look unusual still pass,
// forwarded exactly as sent, and a rule written with "//" matches that
// raw spelling.
func TestPathSpellingsAllowed(t *testing.T) {
	cases := []struct {
		name, robots, target string
		status               int
		rule                 string
	}{
		{"empty segment elsewhere", "User-agent: *\nDisallow: /private\n", "/a//b", 200, ""},
		{"dot-dot elsewhere", "User-agent: *\nDisallow: /private\n", "/a/b/../c", 200, ""},
		{"escaped slash elsewhere", "User-agent: *\nDisallow: /private\n", "/a/b%2Fc", 200, ""},
		{"dots in the query", "User-agent: *\nDisallow: /private\n", "/search?q=/../private/secret.txt", 200, ""},
		{"rule with //, raw spelling", "User-agent: *\nDisallow: /a//b\n", "/a//b", 403, "line 2: Disallow: /a//b"},
		{"rule with //, other path", "User-agent: *\nDisallow: /a//b\n", "/a/c", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newResolvingOrigin(t, c.robots, false)
			h := newHarness(t, harnessOptions{})
			conn, err := net.Dial("tcp", h.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			resp, _ := rawGet(t, conn, o.URL+c.target, strings.TrimPrefix(o.URL, "http://"))
			if resp.StatusCode != c.status || resp.Header.Get(proxy.HeaderRule) != c.rule {
				t.Fatalf("%s: got %d rule %q, want %d rule %q", c.target, resp.StatusCode, resp.Header.Get(proxy.HeaderRule), c.status, c.rule)
			}
			want := []string{c.target}
			if c.status != 200 {
				want = nil
			}
			if seen := o.seen(); strings.Join(seen, " ") != strings.Join(want, " ") {
				t.Errorf("the origin saw %q, want %q (forwarded as sent)", seen, want)
			}
		})
	}
}

// TestPathSpellingsIntercepted: inside an intercepted HTTPS tunnel, where
// the target is in origin form, spellings of a disallowed path are denied
// too; "//private/..." is a path there, not an authority.
func TestPathSpellingsIntercepted(t *testing.T) {
	o := newResolvingOrigin(t, "User-agent: *\nDisallow: /private\n", true)
	h, ca, _ := interceptHarness(t, o.Client().Transport.(*http.Transport).TLSClientConfig, o.origin, nil)
	host := strings.TrimPrefix(o.URL, "https://")
	for _, target := range []string{
		"/public/../private/secret.txt",
		"//private/secret.txt",
		"/public/..%2Fprivate/secret.txt",
		`/public\..\private\secret.txt`,
		"/public/.%2E/private/secret.txt",
		"/public#/../private/secret.txt",
	} {
		t.Run(target, func(t *testing.T) {
			before, seenBefore := len(h.audit.Lines(t)), len(o.seen())
			conn, err := net.Dial("tcp", h.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("CONNECT: %v %v", resp, err)
			}
			tc := tls.Client(conn, &tls.Config{RootCAs: ca.CertPool(), ServerName: "127.0.0.1"})
			resp, body := rawGet(t, tc, target, host)
			if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "rule" {
				t.Fatalf("got %d %s=%q, want 403 rule; body %q", resp.StatusCode, proxy.HeaderReason, resp.Header.Get(proxy.HeaderReason), body)
			}
			if seen := o.seen()[seenBefore:]; len(seen) != 0 {
				t.Errorf("the origin saw %q, want no request", seen)
			}
			var inner map[string]any
			for deadline := time.Now().Add(5 * time.Second); inner == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				for _, l := range h.audit.Lines(t)[before:] {
					if l["intercepted"] == true {
						inner = l
					}
				}
			}
			if inner == nil {
				t.Fatal("no audit line for the request inside the tunnel")
			}
			assertFields(t, inner, map[string]any{"decision": "deny", "reason": "rule", "rule": "Disallow: /private", "status": 403.0})
		})
	}
}
