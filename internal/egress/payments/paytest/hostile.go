package paytest

import (
	"net/http"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
)

// Hostile is an origin behaviour that tries to take the spend past the
// budget: Setup gives it to an Origin priced at USD 0.01; Wait is how long
// each client waits before it goes away (0: as long as it takes).
type Hostile struct {
	Name  string
	Setup func(*Origin)
	Wait  time.Duration
}

// HostileOrigins are the behaviours CheckCeiling is run with: a charge
// above the agreed price, paid retries whose client goes away before the
// answer (the origin bills and never answers), and charges on the 402s
// that ask the price.
var HostileOrigins = []Hostile{
	{Name: "overcharge", Setup: func(o *Origin) { o.SetCharge("USD 0.03") }},
	{Name: "abort", Setup: func(o *Origin) { o.SetHangPaid(true) }, Wait: 500 * time.Millisecond},
	{Name: "charge on 402", Setup: func(o *Origin) { o.SetChargeAsking("USD 0.02") }},
}

// CheckCeiling sends n concurrent priced requests for token through the
// transports to o (priced at USD 0.01, set up by h) and fails the test
// when what the ledger committed for the day (spent, read after) is past
// budget, when the price was agreed more often than the budget allows, or
// when the origin billed (charges, and agreements it never answered) more
// than was committed while within the budget.
func CheckCeiling(t *testing.T, o *Origin, rts []http.RoundTripper, token string, n int, h Hostile, budget payments.Amount, spent func() payments.Amount) {
	t.Helper()
	h.Setup(o)
	out := Outcomes(t, rts, o.URL+"/page", token, n, h.Wait)
	got := spent()
	t.Logf("%s: outcomes %v, origin agreed %d, charged %v, committed %s of %s", h.Name, out, o.Paid(), o.Charged(), got, budget)
	if got > budget {
		t.Errorf("%s: committed %s, past the budget %s", h.Name, got, budget)
	}
	const price = 10_000 // USD 0.01
	if agreed := payments.Amount(o.Paid()) * price; agreed > budget {
		t.Errorf("%s: the price was agreed %d times (%s), past the budget %s", h.Name, o.Paid(), agreed, budget)
	}
	if billed := o.Charged()["USD"]; billed <= budget && got < billed {
		t.Errorf("%s: the origin billed %s, only %s was committed", h.Name, billed, got)
	}
	if got == 0 {
		t.Errorf("%s: nothing committed", h.Name)
	}
}
