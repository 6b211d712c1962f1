package proxy_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// flakyAudit is an audit log whose writes fail while fail is set, and
// which reports Failing as audit.Writer does: the last write failed.
type flakyAudit struct {
	testkit.AuditSink
	fail     atomic.Bool
	failing  atomic.Bool
	attempts atomic.Int64
}

func (f *flakyAudit) Write(p []byte) (int, error) {
	f.attempts.Add(1)
	if f.fail.Load() {
		f.failing.Store(true)
		return 0, syscall.ENOSPC
	}
	f.failing.Store(false)
	return f.AuditSink.Write(p)
}

func (f *flakyAudit) Failing() bool { return f.failing.Load() }

// writeErrHarness is a harness whose audit log is fa, continuing on write
// errors when cont; intercepting CONNECT when o is a TLS origin.
func writeErrHarness(t *testing.T, o *origin, fa io.Writer, cont, intercept bool) *harness {
	t.Helper()
	ho := harnessOptions{policy: connectPorts(o)}
	var certs *mitm.Certs
	if intercept {
		ca, err := mitm.NewCA(mitm.CAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if certs, err = mitm.NewCerts(ca, mitm.CertsOptions{}); err != nil {
			t.Fatal(err)
		}
		ho.tls, ho.clientTLS = originTLS(o), &tls.Config{RootCAs: ca.CertPool()}
	}
	ho.proxy = func(po *proxy.Options) {
		po.Audit, po.AuditContinue = fa, cont
		if certs != nil {
			po.Intercept = certs.TLSConfig
		}
	}
	return newHarness(t, ho)
}

// TestAuditWriteErrors: with refuse (the default), a request that arrives
// while the audit log fails is answered 503 audit-unavailable and never
// reaches the origin (its own line is attempted), and a forwarded request
// whose line fails is cut off instead of completed; with continue, both
// are answered as decided.
func TestAuditWriteErrors(t *testing.T) {
	const robots = "User-agent: *\nDisallow: /private\n"
	cases := []struct {
		name      string
		tls       bool // an intercepted tunnel
		cont      bool
		failFirst bool // the log is failing before the request (else it fails at its line)
		path      string
		want      int // status; 0: the connection is cut
		reason    string
		forwarded bool
	}{
		{"refuse failing allowed", false, false, true, "/page", 503, "audit-unavailable", false},
		{"refuse failing denied", false, false, true, "/private/x", 503, "audit-unavailable", false},
		{"refuse failing chunked", false, false, true, "/chunked/x", 503, "audit-unavailable", false},
		{"refuse line fails, length", false, false, false, "/big/x", 0, "", true},
		{"refuse line fails, small length", false, false, false, "/page", 0, "", true},
		{"refuse line fails, chunked", false, false, false, "/chunked/x", 0, "", true},
		{"refuse line fails, denied", false, false, false, "/private/x", 0, "", false},
		{"continue failing allowed", false, true, true, "/page", 200, "", true},
		{"continue failing denied", false, true, true, "/private/x", 403, "rule", false},
		{"continue line fails", false, true, false, "/big/x", 200, "", true},
		{"intercepted refuse failing", true, false, true, "/page", 503, "audit-unavailable", false},
		{"intercepted refuse line fails", true, false, false, "/page", 0, "", true},
		{"intercepted refuse line fails, length", true, false, false, "/big/x", 0, "", true},
		{"intercepted continue failing", true, true, true, "/page", 200, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o *origin
			if tc.tls {
				o = newTLSOrigin(t, serveRobots(robots))
			} else {
				o = newOrigin(t, serveRobots(robots))
			}
			fa := &flakyAudit{}
			h := writeErrHarness(t, o, fa, tc.cont, tc.tls)
			// Warm the robots.txt cache (and the tunnel) while the log works.
			if resp, _ := h.do(t, "GET", o.URL+"/warm", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
				t.Fatalf("warm-up: %d", resp.StatusCode)
			}
			// A new connection per request: a client retries a request cut
			// off on a reused one, which would hide the cut.
			// (An intercepted request keeps its tunnel: a new CONNECT
			// would be refused.)
			if !tc.tls {
				h.client.Transport.(*http.Transport).DisableKeepAlives = true
				h.client.CloseIdleConnections()
			}
			fa.fail.Store(true)
			if tc.failFirst {
				fa.failing.Store(true)
			}
			before := fa.attempts.Load()
			req, _ := http.NewRequest("GET", o.URL+tc.path, nil)
			req.Header.Set("User-Agent", "ExampleBot/1.0")
			resp, err := h.client.Do(req)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("got a whole answer %d (%d octets), want the connection cut", resp.StatusCode, len(body))
			case tc.want != 0 && err != nil:
				t.Fatalf("got %v, want %d", err, tc.want)
			case tc.want != 0 && (resp.StatusCode != tc.want || resp.Header.Get(proxy.HeaderReason) != tc.reason):
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get(proxy.HeaderReason), tc.want, tc.reason)
			}
			if tc.want == http.StatusServiceUnavailable && !strings.Contains(string(body), "audit log") {
				t.Errorf("503 body %q does not say why", body)
			}
			if got := o.Count(tc.path) > 0; got != tc.forwarded {
				t.Errorf("forwarded to the origin: %v, want %v", got, tc.forwarded)
			}
			if fa.attempts.Load() == before {
				t.Errorf("the request's line was not attempted")
			}
		})
	}
}

// TestAuditUnavailableLineWritten: the 503 of a request refused while the
// log was failing is audited when its own write succeeds (space came
// back), with reason audit-unavailable; the next request is forwarded.
func TestAuditUnavailableLineWritten(t *testing.T) {
	o := newOrigin(t, serveRobots("User-agent: *\nDisallow: /private\n"))
	fa := &flakyAudit{}
	h := writeErrHarness(t, o, fa, false, false)
	fa.failing.Store(true) // the last write failed; this one will not
	resp, _ := h.do(t, "GET", o.URL+"/one", "ExampleBot/1.0", "")
	if resp.StatusCode != 503 || o.Count("/one") != 0 {
		t.Fatalf("got %d, origin hits %d; want 503 and none", resp.StatusCode, o.Count("/one"))
	}
	resp, _ = h.do(t, "GET", o.URL+"/two", "ExampleBot/1.0", "")
	if resp.StatusCode != 200 || o.Count("/two") != 1 {
		t.Fatalf("after recovery: got %d, origin hits %d; want 200 and 1", resp.StatusCode, o.Count("/two"))
	}
	lines := fa.Lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %v", len(lines), lines)
	}
	l := lines[0]
	if l["reason"] != string(auditlog.ReasonAuditUnavailable) || l["status"] != float64(503) || l["decision"] != "deny" ||
		!strings.HasSuffix(l["url"].(string), "/one") {
		t.Errorf("line of the refused request = %v, want deny audit-unavailable 503", l)
	}
}

// TestAuditServesFirstRequestAfterRecovery: with the real audit writer
// on a full disk, requests are refused 503 audit-unavailable and never
// forwarded; the first request after space returns is served as decided,
// with its one line after the lost-lines marker, plain or intercepted.
func TestAuditServesFirstRequestAfterRecovery(t *testing.T) {
	for _, intercept := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "intercepted"}[intercept], func(t *testing.T) {
			const robots = "User-agent: *\nDisallow: /private\n"
			o := newOrigin(t, serveRobots(robots))
			if intercept {
				o = newTLSOrigin(t, serveRobots(robots))
			}
			disk := testkit.NewFullDisk(1 << 20)
			w := audit.NewWriter(disk, audit.Options{Chain: true, OnWriteError: "refuse"})
			h := writeErrHarness(t, o, w, false, intercept)
			if !intercept {
				h.client.Transport.(*http.Transport).DisableKeepAlives = true
			}
			// get returns the status of a GET of path; a refused CONNECT
			// (the tunnel of an intercepted request) counts as its 503.
			get := func(path string) int {
				t.Helper()
				req, _ := http.NewRequest("GET", o.URL+path, nil)
				req.Header.Set("User-Agent", "ExampleBot/1.0")
				resp, err := h.client.Do(req)
				if err != nil {
					if intercept && strings.Contains(err.Error(), "Service Unavailable") {
						return 503
					}
					t.Fatalf("GET %s: %v", path, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := get("/warm"); got != 200 {
				t.Fatalf("warm-up: %d", got)
			}
			disk.SetRoom(0) // full: the line of the next request fails (it is cut off), and the log is failing
			if resp, err := h.client.Get(o.URL + "/filling"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			for _, p := range []string{"/full/1", "/full/2"} {
				if got := get(p); got != 503 || o.Count(p) != 0 {
					t.Fatalf("%s on a full disk: %d, origin hits %d; want 503, none", p, got, o.Count(p))
				}
			}
			if !w.Failing() {
				t.Fatal("the writer is not failing on a full disk")
			}
			disk.SetRoom(1 << 20) // space freed
			for _, c := range []struct {
				path string
				want int
			}{{"/first", 200}, {"/private/second", 403}} {
				if got := get(c.path); got != c.want || o.Count(c.path) != map[bool]int{true: 1}[c.want == 200] {
					t.Errorf("%s after space returned: %d, origin hits %d; want %d as decided", c.path, got, o.Count(c.path), c.want)
				}
			}
			log := string(disk.Bytes())
			var lines []string // the tunnels' CONNECT lines left out
			for _, l := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
				if !strings.Contains(l, `"method":"CONNECT"`) {
					lines = append(lines, l)
				}
			}
			if len(lines) != 4 || !strings.Contains(lines[1], audit.MarkerLostLines) ||
				!strings.Contains(lines[2], `/first","user_agent":"ExampleBot/1.0","decision":"allow"`) ||
				!strings.Contains(lines[3], `/private/second","user_agent":"ExampleBot/1.0","decision":"deny"`) {
				t.Errorf("log: want the warm-up, the lost-lines marker, /first allowed and /private/second denied (and CONNECTs); got\n%s", log)
			}
		})
	}
}
