package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/report"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
)

// TestPaymentsEndToEnd: the binary with payments on pays priced pages
// within ExampleBot's budget (two at 0.01), passes the third 402 with
// over-budget and OtherBot's with no-budget, and "audit report" sums the
// spend per identity and per host.
func TestPaymentsEndToEnd(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	logPath := filepath.Join(t.TempDir(), "audit.log")
	p := startProxy(t, fmt.Sprintf(`log:
  file: %q
payments:
  enabled: true
  identities:
    - product_token: ExampleBot
      max_price: "0.01"
      budget: "0.02"
      currency: USD
`, logPath))
	proxyURL, _ := url.Parse("http://" + p.proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for i, c := range []struct {
		ua, notPaid string
		status      int
	}{
		{"ExampleBot/1.0", "", 200},
		{"ExampleBot/1.0", "", 200},
		{"ExampleBot/1.0", "over-budget", 402},
		{"OtherBot/2.0", "no-budget", 402},
	} {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/page/%d", o.URL, i), nil)
		req.Header.Set("User-Agent", c.ua)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("X-Robotsproxy-Not-Paid") != c.notPaid {
			t.Fatalf("request %d (%s): %d %v %q, want %d not paid %q", i, c.ua, resp.StatusCode, resp.Header, body, c.status, c.notPaid)
		}
	}
	p.stop(t)
	if o.Paid() != 2 {
		t.Fatalf("origin paid %d, want 2", o.Paid())
	}
	stdout, stderr, code := runBinary(t, "", "audit", "report", "-format", "json", logPath)
	if code != 0 {
		t.Fatalf("audit report: exit %d\n%s", code, stderr)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Spend
	if s.Priced != 4 || s.Paid != 2 || !reflect.DeepEqual(s.Charged, []report.Money{{Currency: "USD", Amount: "0.02"}}) ||
		!reflect.DeepEqual(s.NotPaid, map[string]uint64{"over-budget": 1, "no-budget": 1}) {
		t.Errorf("spend %+v", s)
	}
	if len(s.Identities.Rows) != 2 || s.Identities.Rows[0].Key != "token:ExampleBot" || s.Identities.Rows[0].Paid != 2 ||
		len(s.Hosts.Rows) != 1 || s.Hosts.Rows[0].Key != "127.0.0.1" {
		t.Errorf("spend rows: identities %+v, hosts %+v", s.Identities.Rows, s.Hosts.Rows)
	}
	text, _, code := runBinary(t, "", "audit", "report", "-format", "text", logPath)
	if code != 0 || !strings.Contains(text, "Spend per identity") || !strings.Contains(text, "USD 0.02") {
		t.Errorf("audit report -format text: exit %d, no spend section:\n%s", code, text)
	}
}
