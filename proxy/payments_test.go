package proxy_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// TestPaymentsInsideInterceptedTunnel: a request inside an intercepted
// tunnel, over HTTP/1.1 or HTTP/2, goes through the paying step
// (Options.Egress) like a plain one: paid within the budget, the 402 with
// its reason past it, and the audit lines carry price, charged, currency
// and not_paid.
func TestPaymentsInsideInterceptedTunnel(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) { testPaymentsInsideTunnel(t, h2) })
	}
}

func testPaymentsInsideTunnel(t *testing.T, h2 bool) {
	po := paytest.NewTLS(t, "USD 0.01")
	o := &origin{Server: po.Server}
	up := originTLS(o)
	limits := &egress.Table[payments.Limit]{Tokens: map[string]payments.Limit{"examplebot": {
		Budget: "token:examplebot", Currency: "USD", MaxPrice: 10_000, PerDay: 10_000}}}
	h, ca, _ := interceptHarnessWith(t, up, o, nil, func(opts *proxy.Options) {
		opts.Egress = &payments.Transport{Next: opts.Transport, Limits: limits, Ledger: &payments.Local{}}
	})
	if h2 {
		h.client = h2Client(h, ca)
	}
	for i, want := range []int{200, 402} {
		req, _ := http.NewRequest(http.MethodGet, po.URL+"/page", nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	var paid, unpaid int
	for _, l := range h.audit.WaitLines(t, 3) {
		if l["intercepted"] != true {
			continue
		}
		if want := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]; l["protocol"] != want {
			t.Errorf("audit line %v: want protocol %s", l, want)
		}
		switch {
		case l["charged"] == "0.01" && l["currency"] == "USD" && l["price"] == "0.01":
			paid++
		case l["not_paid"] == "over-budget" && l["status"] == 402.0:
			unpaid++
		default:
			t.Errorf("audit line %v", l)
		}
	}
	if paid != 1 || unpaid != 1 || po.Paid() != 1 {
		t.Errorf("%d paid and %d unpaid lines, origin paid %d; want 1, 1, 1", paid, unpaid, po.Paid())
	}
}
