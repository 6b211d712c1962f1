package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
)

// countEgress counts each record once by what it holds; the currency
// label of the spend stops at maxSpentCurrencies, then "other".
func TestCountEgress(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, func() int { return 0 })
	for _, r := range []egress.Record{
		{SignatureKeyID: "k1", Price: "0.01", Charged: "0.01", Currency: "USD"},
		{SignatureKeyID: "k1", Price: "0.02", Currency: "USD", NotPaid: auditlog.NotPaidOverBudget},
		{SignatureKeyID: "k2", Price: "0.01", Currency: "USD"},
		{SigningError: "key-not-valid"},
		{Charged: "1.5", Currency: "EUR"}, // charged without a 402
		{Charged: "not a number", Currency: "EUR"},
		{},
	} {
		m.countEgress(&egress.Exchange{Record: r})
	}
	for i := range maxSpentCurrencies {
		m.countEgress(&egress.Exchange{Record: egress.Record{Charged: "1", Currency: fmt.Sprintf("C%02d", i)}})
	}
	m.countEgress(nil)
	got := gathered(t, reg)
	for sample, want := range map[string]float64{
		`robotsproxy_signed_requests_total{k1}`:           2,
		`robotsproxy_signed_requests_total{k2}`:           1,
		`robotsproxy_signing_errors_total{key-not-valid}`: 1,
		`robotsproxy_payments_total{paid}`:                3 + maxSpentCurrencies,
		`robotsproxy_payments_total{over-budget}`:         1,
		`robotsproxy_payments_total{uncharged}`:           1,
		`robotsproxy_spent_total{USD}`:                    0.01,
		`robotsproxy_spent_total{EUR}`:                    1.5,
		`robotsproxy_spent_total{other}`:                  2, // C06, C07: USD and EUR took two of the 8
		`robotsproxy_spent_total{C05}`:                    1,
	} {
		if got[sample] != want {
			t.Errorf("%s = %v, want %v", sample, got[sample], want)
		}
	}
	var spent int
	for k := range got {
		if strings.HasPrefix(k, "robotsproxy_spent_total{") {
			spent++
		}
	}
	if spent != maxSpentCurrencies+1 {
		t.Errorf("%d spent series, want %d", spent, maxSpentCurrencies+1)
	}
}

// gathered returns the counters of reg as "name{label value}": value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

// BenchmarkCountEgress: the metrics of one signed, paid request.
func BenchmarkCountEgress(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), func() int { return 0 })
	x := &egress.Exchange{Record: egress.Record{SignatureKeyID: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
		Price: "0.01", Charged: "0.01", Currency: "USD"}}
	b.ReportAllocs()
	for b.Loop() {
		m.countEgress(x)
	}
}
