package proxy_test

import (
	"crypto/tls"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// TestPolitenessInsideInterceptedTunnels: requests inside an intercepted
// tunnel, over HTTP/1.1 or HTTP/2, are spaced, capped and checked for
// usage preferences like plain ones, and each gives its in-flight slot
// back when its audit line is written.
func TestPolitenessInsideInterceptedTunnels(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) { testPolitenessInsideTunnels(t, h2) })
	}
}

func testPolitenessInsideTunnels(t *testing.T, h2 bool) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\nCrawl-delay: 5\nContent-Usage: /ai/ train-ai=n\n\nUser-agent: FastBot\nAllow: /\n"))
	ca, err := mitm.NewCA(mitm.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{
		tls:       originTLS(o),
		clientTLS: &tls.Config{RootCAs: ca.CertPool()},
		policy: func(po *policy.Options) {
			connectPorts(o)(po)
			po.Politeness = politeness.New(politeness.Options{CrawlDelay: true, Reject: true, MaxConcurrentPerHost: 1}).Politeness()
			po.Usage = policy.UsageOptions{Enforce: true, Declarations: policy.NewDeclarations(
				map[string][]string{"SlowBot": {"train-ai"}, "FastBot": {"train-ai"}})}
		},
		proxy: func(po *proxy.Options) { po.Intercept = certs.TLSConfig },
	})
	if h2 {
		h.client = h2Client(h, ca)
	}
	steps := []struct {
		path, ua, reason string
		status           int
	}{
		{"/a", "SlowBot/1.0", "", 200},
		{"/b", "SlowBot/1.0", "crawl-delay", 429},
		{"/ai/x", "SlowBot/1.0", "usage-preference", 403},
		// FastBot's group has no crawl delay: one request after another,
		// each one's slot is back in time for the next.
		{"/c", "FastBot/1.0", "", 200},
		{"/d", "FastBot/1.0", "", 200},
		{"/e", "FastBot/1.0", "", 200},
	}
	for i, s := range steps {
		resp, body := h.do(t, "GET", o.URL+s.path, s.ua, "")
		if resp.StatusCode != s.status || resp.Header.Get(proxy.HeaderReason) != s.reason {
			t.Errorf("%s %s: status %d, reason %q; want %d, %q (body %q)", s.ua, s.path, resp.StatusCode,
				resp.Header.Get(proxy.HeaderReason), s.status, s.reason, body)
		}
		h.audit.WaitLines(t, i+1) // its line is written, its slot given back
	}
	lines := h.audit.WaitLines(t, len(steps)+1)
	intercepted := 0
	proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
	for _, l := range lines {
		if l["intercepted"] == true && l["protocol"] == proto {
			intercepted++
		}
	}
	if intercepted != len(steps) {
		t.Errorf("intercepted %s audit lines: got %d, want %d", proto, intercepted, len(steps))
	}
}
