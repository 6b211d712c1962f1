package server

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// With signing and pay per crawl on, the metrics count what the audit
// lines record: each forwarded request signed once under its keyid (the
// paid retry re-signs the same request), the paid ones and the unpaid
// 402 by reason, the spend in the currency's units, and a request not
// sent because its body is over signing.max_body_bytes.
func TestEgressMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	key, err := signing.GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	o := paytest.New(t, "USD 0.01")
	ts := startServer(t, func(c *config.Config) {
		payingConfig("0.02", "")(c)
		c.Signing = config.Signing{Enabled: true, Label: "robotsproxy", Expires: signing.DefaultExpires,
			MaxBodyBytes: 8, Identities: []config.SigningIdentity{
				{ProductToken: "ExampleBot", Keys: []string{dir}, SignatureAgent: "https://crawler.example"}}}
	})
	for i, want := range []int{200, 200, 402} {
		if resp := proxyGet(t, ts.addr, o.URL+"/page"); resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	if resp := proxyPost(t, ts.addr, o.URL+"/form", "more than eight octets"); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("POST over signing.max_body_bytes: %d, want 502", resp.StatusCode)
	}
	ts.audit.WaitLines(t, 4)
	for sample, want := range map[string]float64{
		`robotsproxy_signed_requests_total{keyid="` + key.ID + `"}`: 3,
		`robotsproxy_signing_errors_total{cause="body-too-large"}`:  1,
		`robotsproxy_payments_total{result="paid"}`:                 2,
		`robotsproxy_payments_total{result="over-budget"}`:          1,
		`robotsproxy_spent_total{currency="USD"}`:                   0.02,
	} {
		if got := ts.metric(t, sample); got != want {
			t.Errorf("%s = %v, want %v", sample, got, want)
		}
	}
}

// Off (the default): the egress metrics have no series.
func TestEgressMetricsOff(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	ts := startServer(t, nil)
	proxyGet(t, ts.addr, o.URL+"/page")
	ts.audit.WaitLines(t, 1)
	text := ts.metricsText(t)
	if !strings.Contains(text, "robotsproxy_requests_total{") {
		t.Fatalf("no request counted: %s", text)
	}
	for _, name := range []string{"robotsproxy_signed_requests_total", "robotsproxy_signing_errors_total", "robotsproxy_payments_total", "robotsproxy_spent_total"} {
		if strings.Contains(text, name+"{") {
			t.Errorf("%s has series with signing and payments off", name)
		}
	}
}

// proxyPost sends a POST with body through the proxy at addr as
// ExampleBot.
func proxyPost(t *testing.T, addr, target, body string) *http.Response {
	t.Helper()
	proxyURL, _ := url.Parse("http://" + addr)
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	resp, err := (&http.Transport{Proxy: http.ProxyURL(proxyURL)}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
