package proxy_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/robotsproxy/robotsproxy/mitm"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// flakyAudit is an audit log whose writes fail while fail is set, and
// which reports Failing as audit.Writer does: the last write failed.
type flakyAudit struct {
	syncBuffer
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
	return f.syncBuffer.Write(p)
}

func (f *flakyAudit) Failing() bool { return f.failing.Load() }

// writeErrHarness is a harness whose audit log is fa, continuing on write
// errors when cont; intercepting CONNECT when o is a TLS origin.
func writeErrHarness(t *testing.T, o *origin, fa *flakyAudit, cont, intercept bool) *harness {
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
			if got := o.hitCount(tc.path) > 0; got != tc.forwarded {
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
	if resp.StatusCode != 503 || o.hitCount("/one") != 0 {
		t.Fatalf("got %d, origin hits %d; want 503 and none", resp.StatusCode, o.hitCount("/one"))
	}
	resp, _ = h.do(t, "GET", o.URL+"/two", "ExampleBot/1.0", "")
	if resp.StatusCode != 200 || o.hitCount("/two") != 1 {
		t.Fatalf("after recovery: got %d, origin hits %d; want 200 and 1", resp.StatusCode, o.hitCount("/two"))
	}
	lines := fa.lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %v", len(lines), lines)
	}
	l := lines[0]
	if l["reason"] != string(policy.ReasonAuditUnavailable) || l["status"] != float64(503) || l["decision"] != "deny" ||
		!strings.HasSuffix(l["url"].(string), "/one") {
		t.Errorf("line of the refused request = %v, want deny audit-unavailable 503", l)
	}
}
