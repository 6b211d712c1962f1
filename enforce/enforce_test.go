package enforce_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/enforce"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// origin is a site: robots.txt answered by robots, every other path by
// its name, "/hangup" by closing the connection. It records the paths it
// was asked for, and when (testkit.Visits).
type origin struct {
	*httptest.Server
	testkit.Visits
}

func newOrigin(t testing.TB, robots http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewServer(o.Visits.Handler(robots, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" { // declares 100 octets, sends 5
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "short")
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		if r.URL.Path == "/hangup" {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		io.WriteString(w, "page "+r.URL.Path+"\n")
	})))
	t.Cleanup(o.Close)
	return o
}

func robotsTxt(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// countingBase is the crawler's own transport (http.DefaultTransport's
// kind), counting the requests it carries.
type countingBase struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (b *countingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.n.Add(1)
	return b.next.RoundTrip(r)
}

// newTransport returns an enforce.Transport for the configuration YAML
// cfgYAML, over a counting base, and the buffer its audit lines go to.
func newTransport(t *testing.T, cfgYAML string) (*enforce.Transport, *countingBase, *testkit.AuditSink) {
	t.Helper()
	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n" + cfgYAML))
	if err != nil {
		t.Fatal(err)
	}
	base := &countingBase{next: &http.Transport{}}
	out := &testkit.AuditSink{}
	tr, err := enforce.New(enforce.Options{Config: cfg, Base: base, Audit: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, base, out
}

func get(t *testing.T, tr http.RoundTripper, url string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "TestBot/2.1 (+https://example.test/bot)")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b), nil
}

func TestRoundTrip(t *testing.T) {
	const rules = "User-agent: testbot\nDisallow: /private/\nAllow: /private/ok\n"
	tests := []struct {
		name     string
		robots   http.HandlerFunc
		path     string
		cfg      string
		status   int    // 0: RoundTrip's error
		reason   string // the audit line's reason
		decision string
		refused  bool // a refusal of robotsproxy (never reaches the origin)
		body     string
		token    string // the audit line's product_token; "" for TestBot
	}{
		{name: "no matching rule", robots: robotsTxt(200, rules), path: "/public",
			status: 200, reason: "no-matching-rule", decision: "allow", body: "page /public\n"},
		{name: "allow rule, longest match", robots: robotsTxt(200, rules), path: "/private/ok",
			status: 200, reason: "rule", decision: "allow", body: "page /private/ok\n"},
		{name: "disallow rule", robots: robotsTxt(200, rules), path: "/private/x",
			status: 403, reason: "rule", decision: "deny", refused: true},
		{name: "unavailable robots.txt (404)", robots: robotsTxt(404, ""), path: "/private/x",
			status: 200, reason: "unavailable", decision: "allow", body: "page /private/x\n"},
		{name: "unreachable robots.txt (500)", robots: robotsTxt(500, ""), path: "/public",
			status: 403, reason: "unreachable", decision: "deny", refused: true},
		{name: "report mode forwards a denial", robots: robotsTxt(200, rules), path: "/private/x", cfg: "mode: report\n",
			status: 200, reason: "rule", decision: "deny", body: "page /private/x\n"},
		{name: "credentials required, none given", robots: robotsTxt(200, rules), path: "/public",
			cfg:    "identity:\n  require_credentials: true\n  client_ranges:\n    - cidr: 10.0.0.0/8\n      token: TestBot\n",
			status: 407, reason: "proxy-auth-required", decision: "deny", refused: true, token: "*"},
		{name: "origin hangs up", robots: robotsTxt(200, rules), path: "/hangup",
			status: 0, reason: "no-matching-rule", decision: "allow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, tc.robots)
			tr, base, out := newTransport(t, tc.cfg)
			resp, body, err := get(t, tr, o.URL+tc.path)
			if tc.status == 0 {
				if err == nil {
					t.Fatalf("status %d, want an error", resp.StatusCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tc.status {
					t.Errorf("status %d, want %d (body %q)", resp.StatusCode, tc.status, body)
				}
				reason, refused := enforce.Refusal(resp)
				if refused != tc.refused || (refused && reason != tc.reason) {
					t.Errorf("Refusal = %q, %v; want %q, %v", reason, refused, tc.reason, tc.refused)
				}
				if !tc.refused && body != tc.body {
					t.Errorf("body %q, want %q", body, tc.body)
				}
			}
			wantBase, wantHits := int64(1), []string{tc.path}
			if tc.refused {
				wantBase, wantHits = 0, nil
			}
			if n := base.n.Load(); n != wantBase {
				t.Errorf("the crawler's transport carried %d requests, want %d", n, wantBase)
			}
			if got := o.Paths(); strings.Join(got, ",") != strings.Join(wantHits, ",") {
				t.Errorf("origin served %q, want %q", got, wantHits)
			}
			lines := out.Lines(t)
			if len(lines) != 1 {
				t.Fatalf("%d audit lines, want 1: %v", len(lines), lines)
			}
			l := lines[0]
			status := float64(tc.status)
			if tc.status == 0 {
				status = 502 // as the proxy answers, with the error
				if l["error"] != "EOF" {
					t.Errorf("audit line's error %v, want EOF", l["error"])
				}
			}
			if tc.token == "" {
				tc.token = "TestBot"
			}
			if l["url"] != o.URL+tc.path || l["product_token"] != tc.token || l["status"] != status ||
				l["reason"] != tc.reason || l["decision"] != tc.decision {
				t.Errorf("audit line %v: want url %s, product_token %s, status %v, reason %s, decision %s",
					l, o.URL+tc.path, tc.token, status, tc.reason, tc.decision)
			}
		})
	}
}

// TestAuditLineVerifies writes the lines of allowed and refused requests
// to a chained log with a robots.txt archive, as the proxy does, and
// checks them with the verifier of "robotsproxy audit verify": the chain
// holds and every decision re-decides the same.
func TestAuditLineVerifies(t *testing.T) {
	o := newOrigin(t, robotsTxt(200, "User-agent: *\nDisallow: /private/\n"))
	dir := t.TempDir()
	logFile := filepath.Join(dir, "audit.log")
	tr, _, _ := newTransport(t, "log:\n  file: "+logFile+"\naudit:\n  chain: true\n  archive_dir: "+filepath.Join(dir, "archive")+"\n")
	for _, p := range []string{"/a", "/private/b", "/c", "/private/d"} {
		if _, _, err := get(t, tr, o.URL+p); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	var problems []string
	res, err := verify.Verify([]string{logFile}, verify.VerifyOptions{Archive: filepath.Join(dir, "archive"), Genesis: true,
		Report: func(p verify.Problem) { problems = append(problems, p.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK(false) || res.Lines != 4 || res.Verified != 4 {
		t.Errorf("verify: %d lines, %d verified, problems %q; want 4 lines, 4 verified, none", res.Lines, res.Verified, problems)
	}
}

// TestCrawlDelay checks the spacing at the origin: with crawl_delay
// enforced, the third of three requests arrives at least two crawl delays
// after the first was sent, whatever the machine's load; with on_early
// reject, a request before its turn is answered 429 and not sent.
func TestCrawlDelay(t *testing.T) {
	const delay = time.Second
	robots := robotsTxt(200, "User-agent: *\nCrawl-delay: 1\n")
	t.Run("wait", func(t *testing.T) {
		o := newOrigin(t, robots)
		tr, _, out := newTransport(t, "politeness:\n  crawl_delay: enforce\n")
		start := time.Now()
		var wg sync.WaitGroup
		for _, p := range []string{"/1", "/2", "/3"} {
			wg.Go(func() {
				if resp, _, err := get(t, tr, o.URL+p); err != nil || resp.StatusCode != 200 {
					t.Errorf("%s: %v %v", p, resp, err)
				}
			})
		}
		wg.Wait()
		visits := o.List()
		last := visits[len(visits)-1].At
		// start is read before the first request is sent, the arrival
		// after the third came (the origin's handler: late, never
		// early), both on the monotonic clock the proxy spaces by: no
		// slack.
		if d := last.Sub(start); d < 2*delay {
			t.Errorf("the third request arrived %v after the first was sent, want at least %v", d, 2*delay)
		} else {
			t.Logf("the third request arrived %v after the first was sent (two crawl delays: %v)", d, 2*delay)
		}
		waited := 0
		for _, l := range out.Lines(t) {
			if l["wait_reason"] == "crawl-delay" {
				waited++
			}
		}
		if waited < 2 {
			t.Errorf("%d audit lines with wait_reason crawl-delay, want 2: %v", waited, out.Lines(t))
		}
	})
	t.Run("reject", func(t *testing.T) {
		o := newOrigin(t, robots)
		tr, base, _ := newTransport(t, "politeness:\n  crawl_delay: enforce\n  on_early: reject\n")
		if resp, _, err := get(t, tr, o.URL+"/1"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("first request: %v %v", resp, err)
		}
		resp, _, err := get(t, tr, o.URL+"/2")
		if err != nil {
			t.Fatal(err)
		}
		reason, refused := enforce.Refusal(resp)
		if resp.StatusCode != http.StatusTooManyRequests || !refused || reason != "crawl-delay" {
			t.Errorf("second request: %d, Refusal %q %v; want 429 crawl-delay", resp.StatusCode, reason, refused)
		}
		if n := base.n.Load(); n != 1 {
			t.Errorf("the crawler's transport carried %d requests, want 1", n)
		}
	})
}

// TestBodyCloseEarly: a crawler that closes a body unread still gets the
// request's audit line, written before Close returns.
func TestBodyCloseEarly(t *testing.T) {
	o := newOrigin(t, robotsTxt(404, ""))
	tr, _, out := newTransport(t, "")
	req, _ := http.NewRequest("GET", o.URL+"/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(out.Lines(t)); n != 1 {
		t.Errorf("%d audit lines after Close, want 1", n)
	}
}

func TestNewErrors(t *testing.T) {
	cfg := enforce.DefaultConfig()
	cfg.Mode = "obey"
	if _, err := enforce.New(enforce.Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("New with mode obey: %v, want an error naming mode", err)
	}
	tr, _, _ := newTransport(t, "")
	req, _ := http.NewRequest("GET", "/relative", nil)
	if _, err := tr.RoundTrip(req); err == nil || errors.Is(err, enforce.ErrCutOff) {
		t.Errorf("relative URL: %v, want an error", err)
	}
}

// TestHTTPS: an https URL is decided as the proxy decides one inside an
// intercepted tunnel. robots.txt is fetched with the system's roots, which
// do not trust the test origin's certificate: unreachable (tls), refused,
// and the crawler's transport (which trusts it) is never used.
func TestHTTPS(t *testing.T) {
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page\n")
	}))
	o.Config.ErrorLog = log.New(io.Discard, "", 0) // the fetcher's handshake fails, as expected
	o.StartTLS()
	defer o.Close()
	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := &countingBase{next: o.Client().Transport}
	tr, err := enforce.New(enforce.Options{Config: cfg, Base: base, Audit: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	resp, _, err := get(t, tr, o.URL+"/page")
	if err != nil {
		t.Fatal(err)
	}
	reason, refused := enforce.Refusal(resp)
	if resp.StatusCode != 403 || !refused || reason != "unreachable" || resp.Header.Get("X-Robotsproxy-Unreachable") != "tls" {
		t.Errorf("%d %q %v %q, want 403, refused unreachable, cause tls", resp.StatusCode, reason, refused, resp.Header.Get("X-Robotsproxy-Unreachable"))
	}
	if n := base.n.Load(); n != 0 {
		t.Errorf("the crawler's transport carried %d requests, want 0", n)
	}
}

// TestCanceledWhileWaiting: a request whose context ends while politeness
// holds it returns at once, without reaching the crawler's transport.
func TestCanceledWhileWaiting(t *testing.T) {
	o := newOrigin(t, robotsTxt(200, "User-agent: *\nCrawl-delay: 30\n"))
	tr, base, _ := newTransport(t, "politeness:\n  crawl_delay: enforce\n")
	if resp, _, err := get(t, tr, o.URL+"/1"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", o.URL+"/2", nil)
	req.Header.Set("User-Agent", "TestBot/2.1") // the same product token as the first
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("the held request was answered 200 (%q)", b)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("RoundTrip returned %v after its context ended, want at once", d)
	}
	if n := base.n.Load(); n != 1 {
		t.Errorf("the crawler's transport carried %d requests, want 1", n)
	}
}

// TestRequestBody: a POST's body reaches the origin whole.
func TestRequestBody(t *testing.T) {
	var got atomic.Value
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(404)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
	}))
	defer o.Close()
	tr, _, _ := newTransport(t, "")
	body := strings.Repeat("form=data&", 10000)
	resp, err := tr.RoundTrip(mustRequest(t, "POST", o.URL+"/submit", strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || got.Load() != body {
		t.Errorf("status %d, origin got %d octets; want 200, %d", resp.StatusCode, len(got.Load().(string)), len(body))
	}
}

func mustRequest(t *testing.T, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestAuditUnwritable: with audit.on_write_error refuse (the default), a
// request whose line cannot be written is cut off (ErrCutOff, as the proxy
// closes the connection), and later ones are refused with 503
// audit-unavailable without reaching the crawler's transport.
func TestAuditUnwritable(t *testing.T) {
	o := newOrigin(t, robotsTxt(404, ""))
	f, err := os.Create(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // every write fails: os.ErrClosed
	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := &countingBase{next: &http.Transport{}}
	tr, err := enforce.New(enforce.Options{Config: cfg, Base: base, Audit: f})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	req := mustRequest(t, "GET", o.URL+"/1", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !errors.Is(err, enforce.ErrCutOff) {
		t.Errorf("first request: %v, want ErrCutOff", err)
	}
	resp, _, err = get(t, tr, o.URL+"/2")
	if err != nil {
		t.Fatal(err)
	}
	if reason, _ := enforce.Refusal(resp); resp.StatusCode != http.StatusServiceUnavailable || reason != "audit-unavailable" {
		t.Errorf("second request: %d %q, want 503 audit-unavailable", resp.StatusCode, reason)
	}
	if n := base.n.Load(); n != 1 {
		t.Errorf("the crawler's transport carried %d requests, want 1 (the first)", n)
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// TestRefusedBodyClosed: RoundTrip closes the body of a request it
// refuses, as http.RoundTripper requires.
func TestRefusedBodyClosed(t *testing.T) {
	o := newOrigin(t, robotsTxt(200, "User-agent: *\nDisallow: /\n"))
	tr, _, _ := newTransport(t, "")
	body := &closeCounter{Reader: strings.NewReader("data")}
	resp, err := tr.RoundTrip(mustRequest(t, "POST", o.URL+"/form", body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || body.closed.Load() == 0 {
		t.Errorf("status %d, body closed %d times; want 403, closed", resp.StatusCode, body.closed.Load())
	}
}

// TestShortBody: an answer that ends before its Content-Length reads as
// io.ErrUnexpectedEOF, as from a server, not as a whole body.
func TestShortBody(t *testing.T) {
	o := newOrigin(t, robotsTxt(404, ""))
	tr, _, _ := newTransport(t, "")
	resp, err := tr.RoundTrip(mustRequest(t, "GET", o.URL+"/short", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read %q, %v; want io.ErrUnexpectedEOF", b, err)
	}
}
