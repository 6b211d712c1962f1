package payments_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
)

// day is the test clock's time, noon UTC.
var day = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// limits is one budget for the product token examplebot.
func limits(maxPrice, perDay string) *egress.Table[payments.Limit] {
	return &egress.Table[payments.Limit]{Tokens: map[string]payments.Limit{"examplebot": {
		Budget: "token:examplebot", Currency: "USD", MaxPrice: amount(maxPrice), PerDay: amount(perDay)}}}
}

func amount(s string) payments.Amount {
	a, err := payments.ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

func newTransport(lim *egress.Table[payments.Limit], l payments.Ledger, now *time.Time) *payments.Transport {
	return &payments.Transport{Next: &http.Transport{MaxIdleConnsPerHost: 32}, Limits: lim, Ledger: l,
		Now: func() time.Time { return *now }}
}

// get sends a GET for the identity token through rt and returns the
// answer, its body and the exchange's record.
func get(t *testing.T, rt http.RoundTripper, url, token string, h http.Header) (*http.Response, string, egress.Record) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	return send(t, rt, req, token)
}

func send(t *testing.T, rt http.RoundTripper, req *http.Request, token string) (*http.Response, string, egress.Record) {
	t.Helper()
	x := &egress.Exchange{Identity: egress.Identity{Token: token}}
	req = req.WithContext(egress.NewContext(req.Context(), x))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), x.Record
}

// Concurrent priced requests against a budget that allows 7 of them:
// exactly 7 are paid, the 13 others get the 402 with the reason.
func TestConcurrentBudgetLocal(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	now := day
	tr := newTransport(limits("0.05", "0.07"), &payments.Local{}, &now)
	paid, unpaid := paytest.Concurrent(t, []http.RoundTripper{tr}, o.URL+"/page", "ExampleBot", 20)
	if paid != 7 || unpaid != 13 || o.Paid() != 7 {
		t.Fatalf("paid %d, unpaid %d, origin paid %d; want 7, 13, 7", paid, unpaid, o.Paid())
	}
}

// What the client and the audit record see for each way a 402 is, or is
// not, paid.
func TestPayOrNot(t *testing.T) {
	for _, tc := range []struct {
		name          string
		price, path   string
		token         string
		max, perDay   string
		status        int
		notPaid       string
		charged       string
		originPaid    int
		wantRecPrice  string
		wantCrawlErr  string
		clientHeaders http.Header
	}{
		{name: "paid", price: "USD 0.01", token: "examplebot", max: "0.05", perDay: "1", status: 200, charged: "0.01", originPaid: 1, wantRecPrice: "0.01"},
		{name: "price equal to max", price: "USD 0.05", token: "examplebot", max: "0.05", perDay: "1", status: 200, charged: "0.05", originPaid: 1, wantRecPrice: "0.05"},
		{name: "over max_price", price: "USD 0.06", token: "examplebot", max: "0.05", perDay: "1", status: 402, notPaid: auditlog.NotPaidOverMaxPrice, wantRecPrice: "0.06"},
		{name: "over budget", price: "USD 0.05", token: "examplebot", max: "0.05", perDay: "0.04", status: 402, notPaid: auditlog.NotPaidOverBudget, wantRecPrice: "0.05"},
		{name: "no configuration for the identity", price: "USD 0.01", token: "otherbot", max: "0.05", perDay: "1", status: 402, notPaid: auditlog.NotPaidNoBudget, wantRecPrice: "0.01"},
		{name: "zero budget", price: "USD 0.01", token: "examplebot", max: "0", perDay: "0", status: 402, notPaid: auditlog.NotPaidNoBudget, wantRecPrice: "0.01"},
		{name: "other currency", price: "EUR 0.01", token: "examplebot", max: "0.05", perDay: "1", status: 402, notPaid: auditlog.NotPaidCurrency, wantRecPrice: "0.01"},
		{name: "unreadable price", price: "USD 0.01", path: paytest.PathBadPrice, token: "examplebot", max: "0.05", perDay: "1", status: 402, notPaid: auditlog.NotPaidBadPrice, wantCrawlErr: paytest.ErrInvalidContentPrice},
		{name: "payment failed", price: "USD 0.01", path: paytest.PathPaymentFailed, token: "examplebot", max: "0.05", perDay: "1", status: 403, notPaid: auditlog.NotPaidRefused, wantRecPrice: "0.01", wantCrawlErr: paytest.ErrPaymentFailed},
		{name: "free page", price: "USD 0.01", path: paytest.PathFree, token: "examplebot", max: "0.05", perDay: "1", status: 200},
		// The proxy pays: a client's own price headers are removed, so
		// the client can neither pay past its budget nor trip the
		// origin's conflict rule.
		{name: "client max price removed", price: "USD 0.01", token: "otherbot", max: "0.05", perDay: "1", status: 402, notPaid: auditlog.NotPaidNoBudget, wantRecPrice: "0.01",
			clientHeaders: http.Header{"Crawler-Max-Price": {"USD 1"}}},
		{name: "client exact and max removed", price: "USD 0.01", token: "examplebot", max: "0.05", perDay: "1", status: 200, charged: "0.01", originPaid: 1, wantRecPrice: "0.01",
			clientHeaders: http.Header{"Crawler-Max-Price": {"USD 1"}, "Crawler-Exact-Price": {"USD 0.01"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := paytest.New(t, tc.price)
			now := day
			ledger := &payments.Local{}
			tr := newTransport(limits(tc.max, tc.perDay), ledger, &now)
			path := tc.path
			if path == "" {
				path = "/page"
			}
			resp, body, rec := get(t, tr, o.URL+path, tc.token, tc.clientHeaders)
			if resp.StatusCode != tc.status || rec.NotPaid != tc.notPaid || resp.Header.Get(payments.HeaderNotPaid) != tc.notPaid {
				t.Errorf("status %d, not paid %q (header %q); want %d, %q", resp.StatusCode, rec.NotPaid,
					resp.Header.Get(payments.HeaderNotPaid), tc.status, tc.notPaid)
			}
			if rec.Charged != tc.charged || rec.Price != tc.wantRecPrice || o.Paid() != tc.originPaid {
				t.Errorf("record %+v, origin paid %d; want charged %q, price %q, paid %d", rec, o.Paid(), tc.charged, tc.wantRecPrice, tc.originPaid)
			}
			if got := resp.Header.Get("crawler-error"); got != tc.wantCrawlErr {
				t.Errorf("crawler-error %q, want %q", got, tc.wantCrawlErr)
			}
			if tc.status == 200 && body != paytest.Body {
				t.Errorf("body %q, want the page", body)
			}
			k := payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}
			if got := ledger.Spent(k).String(); got != orZero(tc.charged) {
				t.Errorf("spent %s, want %s", got, orZero(tc.charged))
			}
			for _, h := range o.Headers() {
				if h.Get("crawler-max-price") != "" {
					t.Errorf("the origin got crawler-max-price %q", h.Get("crawler-max-price"))
				}
				if v := h.Get("crawler-exact-price"); v != "" && v != tc.price {
					t.Errorf("the origin got crawler-exact-price %q, want %q", v, tc.price)
				}
			}
		})
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// The conflict rule of the protocol, on the test origin: both price
// header fields at once are refused with 400 ConflictingPriceHeaders,
// and each alone is judged against the current price.
func TestOriginProtocol(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	for _, tc := range []struct {
		exact, max string
		status     int
		code       string
	}{
		{exact: "USD 0.01", max: "USD 0.01", status: 400, code: paytest.ErrConflictingPriceHeaders},
		{status: 402},
		{exact: "USD 0.01", status: 200},
		{exact: "USD 0.02", status: 402, code: paytest.ErrInvalidCrawlerExactPrice},
		{exact: "0.01", status: 400, code: paytest.ErrInvalidCrawlerPriceValue},
		{max: "USD 0.02", status: 200},
		{max: "USD 0.005", status: 402, code: paytest.ErrInvalidCrawlerMaxPrice},
	} {
		req, _ := http.NewRequest(http.MethodGet, o.URL+"/p", nil)
		if tc.exact != "" {
			req.Header.Set("crawler-exact-price", tc.exact)
		}
		if tc.max != "" {
			req.Header.Set("crawler-max-price", tc.max)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("crawler-error") != tc.code {
			t.Errorf("exact %q max %q: %d %q, want %d %q", tc.exact, tc.max, resp.StatusCode, resp.Header.Get("crawler-error"), tc.status, tc.code)
		}
	}
}

// A price that changes between the 402 and the paid retry: the origin
// refuses the exact price with another 402, the reservation is released
// and the client gets that 402 with price-changed.
func TestPriceChangedBeforeRetry(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.OnAsked(func() { o.SetPrice("USD 0.02") })
	now := day
	ledger := &payments.Local{}
	tr := newTransport(limits("0.05", "1"), ledger, &now)
	resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
	if resp.StatusCode != 402 || rec.NotPaid != auditlog.NotPaidPriceChanged || resp.Header.Get(payments.HeaderNotPaid) != auditlog.NotPaidPriceChanged {
		t.Fatalf("status %d, record %+v, header %v", resp.StatusCode, rec, resp.Header)
	}
	if resp.Header.Get("crawler-price") != "USD 0.02" || resp.Header.Get("crawler-error") != paytest.ErrInvalidCrawlerExactPrice {
		t.Errorf("the client should get the origin's second 402, got %v", resp.Header)
	}
	if got := ledger.Spent(payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}); got != 0 {
		t.Errorf("spent %s after an unpaid retry, want 0", got)
	}
	if o.Paid() != 0 || rec.Charged != "" {
		t.Errorf("origin paid %d, charged %q; want nothing", o.Paid(), rec.Charged)
	}
}

// A charge that differs from the reserved price settles the difference.
func TestChargeDiffersFromPrice(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.SetCharge("USD 0.004")
	now := day
	ledger := &payments.Local{}
	tr := newTransport(limits("0.05", "1"), ledger, &now)
	_, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
	if rec.Charged != "0.004" || rec.Currency != "USD" || rec.Price != "0.01" {
		t.Fatalf("record %+v", rec)
	}
	if got := ledger.Spent(payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}); got.String() != "0.004" {
		t.Errorf("spent %s, want 0.004", got)
	}
}

// The budget is per UTC day: spent out on one day, paid again the next.
func TestBudgetPerUTCDay(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	now := time.Date(2026, 11, 26, 23, 59, 0, 0, time.FixedZone("UTC-1", -3600)) // 00:59 UTC on the 27th
	tr := newTransport(limits("0.01", "0.01"), &payments.Local{}, &now)
	for i, want := range []int{200, 402} {
		if resp, _, _ := get(t, tr, o.URL+"/p", "examplebot", nil); resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	now = now.Add(23 * time.Hour) // 23:59 UTC on the 27th: the same UTC day
	if resp, _, _ := get(t, tr, o.URL+"/p", "examplebot", nil); resp.StatusCode != 402 {
		t.Fatalf("same UTC day: %d, want 402", resp.StatusCode)
	}
	now = now.Add(2 * time.Minute) // the 28th
	if resp, _, rec := get(t, tr, o.URL+"/p", "examplebot", nil); resp.StatusCode != 200 || rec.Charged != "0.01" {
		t.Fatalf("next UTC day: %d %+v, want paid", resp.StatusCode, rec)
	}
}

// The paid retry sends the request body again: from GetBody, or from a
// buffer of at most MaxBodyBytes; a longer body is not paid for.
func TestRetrySendsBodyAgain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		getBody bool
		notPaid string
	}{
		{name: "GetBody", body: "q=robots", getBody: true},
		{name: "buffered", body: "q=robots"},
		{name: "too long to buffer", body: strings.Repeat("x", 65), notPaid: auditlog.NotPaidBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := paytest.New(t, "USD 0.01")
			now := day
			tr := newTransport(limits("0.05", "1"), &payments.Local{}, &now)
			tr.MaxBodyBytes = 64
			req, _ := http.NewRequest(http.MethodPost, o.URL+"/search", strings.NewReader(tc.body))
			if !tc.getBody {
				req.GetBody = nil
				req.Body = io.NopCloser(strings.NewReader(tc.body))
			}
			resp, _, rec := send(t, tr, req, "examplebot")
			if rec.NotPaid != tc.notPaid {
				t.Fatalf("status %d, record %+v, want not paid %q", resp.StatusCode, rec, tc.notPaid)
			}
			if tc.notPaid == "" && (len(o.Bodies()) != 1 || o.Bodies()[0] != tc.body) {
				t.Errorf("paid request bodies %q, want [%q]", o.Bodies(), tc.body)
			}
		})
	}
}

// Requests without an egress exchange (the proxy's own) pass untouched.
func TestNoExchangePassesThrough(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	now := day
	tr := newTransport(limits("0.05", "1"), &payments.Local{}, &now)
	req, _ := http.NewRequest(http.MethodGet, o.URL+"/page", nil)
	req.Header.Set("crawler-max-price", "USD 0.01")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get(payments.HeaderNotPaid) != "" {
		t.Fatalf("status %d, %v: want the origin's answer untouched", resp.StatusCode, resp.Header)
	}
}
