package payments_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
)

var examplebotKey = payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}

// Under each hostile origin, 30 concurrent requests never commit more
// than the day's budget in the local ledger.
func TestCeilingLocal(t *testing.T) {
	for _, h := range paytest.HostileOrigins {
		t.Run(h.Name, func(t *testing.T) {
			o := paytest.New(t, "USD 0.01")
			now := day
			l := &payments.Local{}
			tr := newTransport(limits("0.05", "0.05"), l, &now)
			paytest.CheckCeiling(t, o, []http.RoundTripper{tr}, "examplebot", 30, h, amount("0.05"),
				func() payments.Amount { return l.Spent(examplebotKey) })
		})
	}
}

// An origin that announces 0.01 and charges 0.03: the charge is recorded
// as it is, marked over-agreed, counted only as far as the budget goes,
// and no further payment goes to the host until payments.breach_block
// has passed.
func TestOverchargeBlocksHost(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.SetCharge("USD 0.03")
	now := day
	l := &payments.Local{}
	tr := newTransport(limits("0.05", "0.05"), l, &now)
	tr.BreachBlock = time.Hour
	resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
	if resp.StatusCode != 200 || rec.Charged != "0.03" || rec.Price != "0.01" || rec.Breach != auditlog.PaymentBreachOverAgreed {
		t.Fatalf("first request: %d, record %+v; want 200, charged 0.03, breach over-agreed", resp.StatusCode, rec)
	}
	for i := range 7 {
		resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
		if resp.StatusCode != 402 || rec.NotPaid != auditlog.NotPaidBreach || resp.Header.Get(payments.HeaderNotPaid) != auditlog.NotPaidBreach {
			t.Fatalf("request %d after the breach: %d, record %+v; want 402 breach", i, resp.StatusCode, rec)
		}
	}
	if o.Paid() != 1 || l.Spent(examplebotKey) != amount("0.03") {
		t.Fatalf("origin paid %d, spent %s; want 1, 0.03", o.Paid(), l.Spent(examplebotKey))
	}
	now = now.Add(time.Hour)
	resp, _, rec = get(t, tr, o.URL+"/page", "examplebot", nil)
	if resp.StatusCode != 200 || rec.Breach != auditlog.PaymentBreachOverAgreed {
		t.Fatalf("after the block: %d, record %+v; want paid again", resp.StatusCode, rec)
	}
	if got := l.Spent(examplebotKey); got != amount("0.05") {
		t.Errorf("spent %s, want 0.05: the second overcharge counted as far as the budget goes", got)
	}
}

// A crawler-charged on the 402 that asks the price is recorded, counted
// and a breach: the 402 is not paid.
func TestChargeOn402(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.SetChargeAsking("USD 0.02")
	now := day
	l := &payments.Local{}
	tr := newTransport(limits("0.05", "1"), l, &now)
	resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
	if resp.StatusCode != 402 || rec.Charged != "0.02" || rec.Currency != "USD" || rec.Breach != auditlog.PaymentBreachUnasked ||
		rec.NotPaid != auditlog.NotPaidBreach {
		t.Fatalf("%d, record %+v; want 402, charged 0.02, breach unasked, not paid breach", resp.StatusCode, rec)
	}
	if o.Paid() != 0 || l.Spent(examplebotKey) != amount("0.02") {
		t.Errorf("origin paid %d, spent %s; want 0, 0.02", o.Paid(), l.Spent(examplebotKey))
	}
}

// The client goes away after the paid retry was sent: the origin may have
// billed, so the price stays committed (unknown-outcome). Six such aborts
// against a budget of 0.02 agree to at most two prices.
func TestAbortedRetryStaysCommitted(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.SetHangPaid(true)
	now := day
	l := &payments.Local{}
	tr := newTransport(limits("0.01", "0.02"), l, &now)
	var notPaid []string
	for range 6 {
		out := paytest.Outcomes(t, []http.RoundTripper{tr}, o.URL+"/page", "examplebot", 1, 300*time.Millisecond)
		for k := range out {
			notPaid = append(notPaid, k)
		}
	}
	want := "unknown-outcome unknown-outcome over-budget over-budget over-budget over-budget"
	if got := strings.Join(notPaid, " "); got != want {
		t.Errorf("outcomes %q, want %q", got, want)
	}
	if o.Paid() != 2 || l.Spent(examplebotKey) != amount("0.02") {
		t.Errorf("origin agreed %d, spent %s; want 2, 0.02", o.Paid(), l.Spent(examplebotKey))
	}
}

// Every spelling of the price fields a client sends is removed: an
// origin behind CGI, PHP or nginx reads Crawler_Max_Price as
// crawler-max-price.
func TestClientPriceFieldSpellings(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	now := day
	tr := newTransport(limits("0.05", "1"), &payments.Local{}, &now)
	h := http.Header{}
	for _, name := range []string{"Crawler_Max_Price", "CRAWLER-MAX-PRICE", "crawler.exact.price", "Crawler_Exact-Price", "CrawlerMaxPrice", "crawler--max__price"} {
		h[name] = []string{"USD 1"}
	}
	h["Crawler-Price-Note"] = []string{"kept"}
	resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", h)
	if resp.StatusCode != 200 || rec.Charged != "0.01" {
		t.Fatalf("%d, record %+v; want paid 0.01", resp.StatusCode, rec)
	}
	heads := o.Headers()
	if len(heads) != 2 {
		t.Fatalf("origin got %d requests, want 2", len(heads))
	}
	for i, got := range heads {
		for name, v := range got {
			if payments.RemovePriceFields(http.Header{name: v}) && !(i == 1 && name == "Crawler-Exact-Price" && v[0] == "USD 0.01") {
				t.Errorf("request %d reached the origin with %s: %q", i, name, v)
			}
		}
		if got.Get("Crawler-Price-Note") != "kept" {
			t.Errorf("request %d lost an unrelated field", i)
		}
	}
}

// A request forwarded only because the mode is report is never paid: its
// 402 reaches the client as the origin sent it (no X-Robotsproxy-Not-Paid,
// so that the crawler cannot tell), no paid retry goes out, and the record
// says report-only.
func TestReportOnlyNotPaid(t *testing.T) {
	for _, tc := range []struct{ path, price string }{{"/page", "0.01"}, {paytest.PathBadPrice, ""}} {
		o := paytest.New(t, "USD 0.01")
		now := day
		l := &payments.Local{}
		tr := newTransport(limits("0.05", "1"), l, &now)
		req, _ := http.NewRequest(http.MethodGet, o.URL+tc.path, nil)
		x := &egress.Exchange{Identity: egress.Identity{Token: "examplebot"}, ReportOnly: true}
		resp, err := tr.RoundTrip(req.WithContext(egress.NewContext(req.Context(), x)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 402 || resp.Header.Get(payments.HeaderNotPaid) != "" || x.Record.NotPaid != auditlog.NotPaidReportOnly ||
			x.Record.Price != tc.price || x.Record.Charged != "" {
			t.Fatalf("%s: %d %v, record %+v; want the 402 unpaid, report-only", tc.path, resp.StatusCode, resp.Header, x.Record)
		}
		if len(o.Headers()) != 1 || o.Paid() != 0 || l.Spent(examplebotKey) != 0 {
			t.Errorf("%s: origin got %d requests, paid %d, spent %s; want 1, 0, 0", tc.path, len(o.Headers()), o.Paid(), l.Spent(examplebotKey))
		}
	}
}

// A charge of nothing on a free page is recorded, and is no breach.
func TestZeroChargeUnaskedIsNoBreach(t *testing.T) {
	o := paytest.New(t, "USD 0.01")
	o.SetChargeAsking("USD 0")
	now := day
	l := &payments.Local{}
	tr := newTransport(limits("0.05", "1"), l, &now)
	resp, _, rec := get(t, tr, o.URL+"/page", "examplebot", nil)
	if resp.StatusCode != 200 || rec.Breach != "" || rec.Charged != "0.01" || l.Spent(examplebotKey) != amount("0.01") {
		t.Fatalf("%d, record %+v, spent %s; want paid 0.01, no breach", resp.StatusCode, rec, l.Spent(examplebotKey))
	}
}
