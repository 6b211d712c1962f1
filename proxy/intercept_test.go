package proxy_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// interceptHarness is a harness intercepting CONNECT with a fresh CA whose
// clients trust that CA only. upstream is the proxy's TLS configuration
// towards origins (nil: system roots).
func interceptHarness(t *testing.T, upstream *tls.Config, o *origin, pol func(*policy.Options)) (*harness, *mitm.CA, *mitm.Certs) {
	t.Helper()
	return interceptHarnessWith(t, upstream, o, pol, nil)
}

// interceptHarnessWith is interceptHarness with more proxy options.
func interceptHarnessWith(t *testing.T, upstream *tls.Config, o *origin, pol func(*policy.Options),
	prox func(*proxy.Options)) (*harness, *mitm.CA, *mitm.Certs) {
	t.Helper()
	ca, err := mitm.NewCA(mitm.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports := connectPorts(o)
	h := newHarness(t, harnessOptions{
		tls:       upstream,
		clientTLS: &tls.Config{RootCAs: ca.CertPool()},
		policy: func(po *policy.Options) {
			ports(po)
			if pol != nil {
				pol(po)
			}
		},
		proxy: func(po *proxy.Options) {
			po.Intercept = certs.TLSConfig
			if prox != nil {
				prox(po)
			}
		},
	})
	return h, ca, certs
}

func originTLS(o *origin) *tls.Config {
	return o.Client().Transport.(*http.Transport).TLSClientConfig
}

// TestInterceptDecidesPaths: with a CA, every request inside a tunnel is
// decided on its own path, the client sees a certificate chaining to the
// operator's CA, and robots.txt is fetched over https once.
func TestInterceptDecidesPaths(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nDisallow: /private\n"))
	h, ca, certs := interceptHarness(t, originTLS(o), o, nil)

	req, _ := http.NewRequest("GET", o.URL+"/page", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // so the tunnel is reused
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/page: got %d, want 200", resp.StatusCode)
	}
	leaf := resp.TLS.PeerCertificates[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.CertPool()}); err != nil {
		t.Errorf("the tunnel's certificate does not chain to the operator's CA: %v", err)
	}
	if len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("leaf IP SANs %v, want [127.0.0.1]", leaf.IPAddresses)
	}

	resp, body := h.do(t, "GET", o.URL+"/private/x", "ExampleBot/1.0", "")
	if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "rule" {
		t.Errorf("/private/x: got %d %q, want 403 rule", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	if !strings.Contains(body, "Disallow: /private") {
		t.Errorf("403 body %q does not name the rule", body)
	}
	if o.Count("/private/x") != 0 {
		t.Error("a disallowed path inside the tunnel reached the origin")
	}
	if n := o.RobotsHits(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	if s := certs.Stats(); s.Signed != 1 {
		t.Errorf("signed %d leaves for one host, want 1", s.Signed)
	}

	var lines []map[string]any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if lines = h.audit.Lines(t); countIntercepted(lines) >= 2 {
			break
		}
	}
	var connects, inner int
	for _, l := range lines {
		switch {
		case l["method"] == "CONNECT":
			connects++
			if l["tunnel"] != "intercepted" || l["reason"] != "intercept" {
				t.Errorf("CONNECT line %v: want tunnel intercepted, reason intercept", l)
			}
		case l["intercepted"] == true:
			inner++
			if !strings.HasPrefix(l["url"].(string), "https://127.0.0.1:") {
				t.Errorf("inner line url %v, want the absolute https URL", l["url"])
			}
			if l["url"].(string) == o.URL+"/page" && (l["status"] != 200.0 || l["bytes"] != float64(len("origin:GET:/page"))) {
				t.Errorf("inner /page line %v: want status 200 and the body size", l)
			}
		}
	}
	if connects < 1 || inner != 2 {
		t.Errorf("audit: %d CONNECT lines and %d inner lines, want >= 1 and 2:\n%v", connects, inner, lines)
	}
}

// TestInterceptUpstreamVerification: an origin whose certificate does not
// verify is an error, never silently accepted: robots.txt is unreachable
// (complete disallow) and the implicitly allowed /robots.txt gets 502.
func TestInterceptUpstreamVerification(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h, _, _ := interceptHarness(t, nil, o, nil)

	resp, _ := h.do(t, "GET", o.URL+"/page", "ExampleBot/1.0", "")
	if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "unreachable" {
		t.Errorf("/page: got %d %q, want 403 unreachable", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	resp, body := h.do(t, "GET", o.URL+"/robots.txt", "ExampleBot/1.0", "")
	if resp.StatusCode != 502 || !strings.Contains(body, "certificate") {
		t.Errorf("/robots.txt: got %d %q, want 502 naming the certificate", resp.StatusCode, body)
	}
	if o.Count("/page") != 0 {
		t.Error("the unverified origin served /page")
	}
}

// TestInterceptHostMismatch: a request inside a tunnel may only go to the
// tunnel's own authority.
func TestInterceptHostMismatch(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h, ca, _ := interceptHarness(t, originTLS(o), o, nil)
	host := strings.TrimPrefix(o.URL, "https://")
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
	fmt.Fprintf(tc, "GET /page HTTP/1.1\r\nHost: other.example\r\nUser-Agent: ExampleBot/1.0\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get(proxy.HeaderReason) != "bad-request" {
		t.Errorf("got %d %q, want 400 bad-request", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	if o.Count("/page") != 0 {
		t.Error("the mismatched request reached the origin")
	}
}

func countIntercepted(lines []map[string]any) int {
	n := 0
	for _, l := range lines {
		if l["intercepted"] == true {
			n++
		}
	}
	return n
}

// TestInterceptLineBeforeAnswer: inside an intercepted tunnel the line of
// an allowed request is written before the last octet of its answer
// reaches the client (goproxy writes the response itself and closes the
// body after), for bodies with a length and chunked ones, and it counts
// the body's octets.
func TestInterceptLineBeforeAnswer(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h, _, _ := interceptHarness(t, originTLS(o), o, nil)
	h.audit.Delay.Store(int64(2 * time.Millisecond)) // a late line is seen late
	want := 0
	for i := range 40 {
		path := "/page" // "origin:GET:/page", with a Content-Length
		if i%2 == 1 {
			path = "/chunked/page" // the origin's handler flushes: chunked
		}
		resp, body := h.do(t, "GET", o.URL+path, "ExampleBot/1.0", "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: got %d, want 200", path, resp.StatusCode)
		}
		want++
		var inner []map[string]any // the tunnel's own CONNECT line is not one
		for _, l := range h.audit.Lines(t) {
			if l["intercepted"] == true {
				inner = append(inner, l)
			}
		}
		if len(inner) != want {
			t.Fatalf("after %d answers inside the tunnel the audit log has %d lines of them", want, len(inner))
		}
		if l := inner[want-1]; l["bytes"] != float64(len(body)) || l["url"] != o.URL+path {
			t.Errorf("%s: audit line %v: want this request's, with bytes %d", path, l, len(body))
		}
	}
}

// TestInterceptTargetLimit: a request inside an intercepted tunnel whose
// target is over client.max_request_target_bytes gets 414, as outside
// one, and never reaches the origin (goproxy reads those requests itself,
// past the server's limit).
func TestInterceptTargetLimit(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	h, _, _ := interceptHarness(t, originTLS(o), o, nil)
	long := "/x?" + strings.Repeat("a", proxy.DefaultMaxRequestTargetBytes)
	resp, _ := h.do(t, "GET", o.URL+long, "ExampleBot/1.0", "")
	if resp.StatusCode != http.StatusRequestURITooLong || resp.Header.Get(proxy.HeaderReason) != "uri-too-long" {
		t.Errorf("long target in a tunnel: got %d %q, want 414 uri-too-long", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	if n := o.Count("/x"); n != 0 {
		t.Errorf("the origin got the long target %d times, want 0", n)
	}
	var line map[string]any
	for _, l := range h.audit.WaitLines(t, 1) {
		if l["intercepted"] == true {
			line = l
		}
	}
	if line["reason"] != "uri-too-long" || line["status"] != 414.0 || line["url_truncated"] != true {
		t.Errorf("audit line %v: want reason uri-too-long, status 414, the url cut", line)
	}
	if resp, _ := h.do(t, "GET", o.URL+"/short", "ExampleBot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("a short target after it: got %d, want 200", resp.StatusCode)
	}
}
