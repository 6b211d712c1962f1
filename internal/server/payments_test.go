package server

import (
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/internal/redistest"
)

// payingConfig turns payments on with a budget of perDay for ExampleBot,
// at most 0.05 a request.
func payingConfig(perDay, redisURL string) func(*config.Config) {
	return func(c *config.Config) {
		c.Shared.RedisURL = redisURL
		c.Payments = config.Payments{Enabled: true, Identities: []config.PaymentIdentity{
			{ProductToken: "ExampleBot", MaxPrice: "0.05", Budget: perDay, Currency: "USD"}}}
	}
}

// proxyGet sends a GET through the proxy at addr as ExampleBot.
func proxyGet(t *testing.T, addr, target string) *http.Response {
	t.Helper()
	proxyURL, _ := url.Parse("http://" + addr)
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	resp, err := (&http.Transport{Proxy: http.ProxyURL(proxyURL)}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// Through the proxy: priced pages are paid within the day's budget, the
// audit line shows price, charged and currency, and past the budget the
// client gets the 402 with the reason, in the header and the audit line.
func TestPaymentsThroughProxy(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	ts := startServer(t, payingConfig("0.02", ""))
	for i, want := range []int{200, 200, 402} {
		resp := proxyGet(t, ts.addr, o.URL+"/page")
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		if want == 402 && resp.Header.Get(payments.HeaderNotPaid) != "over-budget" {
			t.Errorf("request %d: not-paid header %q, want over-budget", i, resp.Header.Get(payments.HeaderNotPaid))
		}
	}
	var paid, unpaid int
	for _, l := range ts.audit.WaitLines(t, 3) {
		if l["status"] == nil || l["url"] != o.URL+"/page" {
			continue
		}
		switch {
		case l["charged"] == "0.01" && l["currency"] == "USD" && l["price"] == "0.01" && l["not_paid"] == nil:
			paid++
		case l["not_paid"] == "over-budget" && l["price"] == "0.01" && l["charged"] == nil && l["status"] == 402.0:
			unpaid++
		default:
			t.Errorf("audit line %v", l)
		}
	}
	if paid != 2 || unpaid != 1 || o.Paid() != 2 {
		t.Errorf("audit: %d paid, %d unpaid, origin paid %d; want 2, 1, 2", paid, unpaid, o.Paid())
	}
}

// Off (the default): the 402 reaches the client as the origin sent it,
// nothing is paid and the audit line has no payment fields.
func TestPaymentsOff(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	ts := startServer(t, nil)
	resp := proxyGet(t, ts.addr, o.URL+"/page")
	if resp.StatusCode != 402 || resp.Header.Get(payments.HeaderNotPaid) != "" || resp.Header.Get("crawler-price") != "USD 0.01" {
		t.Fatalf("%d %v, want the origin's 402 unchanged", resp.StatusCode, resp.Header)
	}
	lines := ts.audit.WaitLines(t, 1)
	if len(lines) != 1 || lines[0]["status"] != 402.0 {
		t.Fatalf("audit lines %v, want one with status 402", lines)
	}
	for _, l := range lines {
		for _, f := range []string{"price", "charged", "currency", "not_paid"} {
			if l[f] != nil {
				t.Errorf("audit line has %s with payments off: %v", f, l)
			}
		}
	}
	if o.Paid() != 0 {
		t.Errorf("origin paid %d with payments off", o.Paid())
	}
}

// Two proxies sharing one store, 20 concurrent priced requests against a
// budget that allows 7: exactly 7 are paid.
func TestPaymentsSharedByTwoProxies(t *testing.T) {
	redisURL := redistest.Start(t).URL()
	o := paytest.New(t, "USD 0.01")
	a := startServer(t, payingConfig("0.075", redisURL))
	b := startServer(t, payingConfig("0.075", redisURL))
	var mu sync.Mutex
	var wg sync.WaitGroup
	counts := map[int]int{}
	for i := range 20 {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			resp := proxyGet(t, addr, o.URL+"/page")
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}([]string{a.addr, b.addr}[i%2])
	}
	wg.Wait()
	if counts[200] != 7 || counts[402] != 13 || o.Paid() != 7 {
		t.Fatalf("answers %v, origin paid %d; want 7 paid and 13 402", counts, o.Paid())
	}
}

// A shared store that goes away: nothing is paid, the client gets the
// 402 with store-unavailable, and so does the audit line.
func TestPaymentsStoreGone(t *testing.T) {
	srv := redistest.Start(t)
	o := paytest.New(t, "USD 0.01")
	ts := startServer(t, payingConfig("1", srv.URL()))
	if resp := proxyGet(t, ts.addr, o.URL+"/page"); resp.StatusCode != 200 {
		t.Fatalf("with the store up: %d, want 200", resp.StatusCode)
	}
	srv.Kill()
	for i := range 2 {
		resp := proxyGet(t, ts.addr, o.URL+"/page")
		if resp.StatusCode != 402 || resp.Header.Get(payments.HeaderNotPaid) != "store-unavailable" {
			t.Fatalf("request %d with the store gone: %d %v", i, resp.StatusCode, resp.Header)
		}
	}
	lines := ts.audit.WaitLines(t, 3)
	if len(lines) != 3 || lines[2]["not_paid"] != "store-unavailable" || lines[2]["charged"] != nil {
		t.Errorf("audit lines %v", lines)
	}
	if o.Paid() != 1 {
		t.Errorf("origin paid %d, want 1", o.Paid())
	}
}
