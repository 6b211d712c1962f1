package proxy

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/egress"
)

// maxSpentCurrencies bounds the currency label of robotsproxy_spent_total:
// the currency of a charge is the origin's, and an origin may name any.
// Charges in currencies past the first maxSpentCurrencies count as
// "other".
const maxSpentCurrencies = 8

// Result label values of robotsproxy_payments_total besides the not_paid
// reasons (auditlog.NotPaid*).
const (
	// paymentPaid: the answer carries a charge (crawler-charged), as
	// audit report counts "paid".
	paymentPaid = "paid"
	// paymentUncharged: a 402 was paid for, and the retry was answered
	// without a charge and without a reason not to pay (the site let it
	// through for free).
	paymentUncharged = "uncharged"
)

// egressMetrics count what the egress steps (signing, paying) did, from
// each forwarded request's egress.Record when its audit line is written.
// Without egress steps no request has a Record: they stay without series.
type egressMetrics struct {
	signed     *prometheus.CounterVec
	signErrors *prometheus.CounterVec
	payments   *prometheus.CounterVec
	spent      *prometheus.CounterVec

	mu         sync.Mutex      // guards currencies
	currencies map[string]bool // currency labels of spent in use
}

func newEgressMetrics(reg prometheus.Registerer) *egressMetrics {
	m := &egressMetrics{
		signed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_signed_requests_total",
			Help: "Forwarded requests signed (Web Bot Auth), by keyid (the key's JWK SHA-256 thumbprint).",
		}, []string{"keyid"}),
		signErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_signing_errors_total",
			Help: "Requests not sent because they could not be signed (answered 502), by cause: body-too-large, key-not-valid, client-field, other.",
		}, []string{"cause"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_payments_total",
			Help: "Pay per crawl outcomes, by result: paid (the answer carries a charge), uncharged (paid retry answered free), or the not_paid reason.",
		}, []string{"result"}),
		spent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_spent_total",
			Help: "Amount charged by origins (pay per crawl), in units of the currency, as a float: the audit lines' charged field is the exact record.",
		}, []string{"currency"}),
		currencies: map[string]bool{},
	}
	reg.MustRegister(m.signed, m.signErrors, m.payments, m.spent)
	return m
}

// countEgress counts what the egress steps recorded for one request.
func (m *Metrics) countEgress(x *egress.Exchange) {
	if m == nil || x == nil {
		return
	}
	r := &x.Record
	e := m.egress
	if r.SignatureKeyID != "" {
		e.signed.WithLabelValues(r.SignatureKeyID).Inc()
	}
	if r.SigningError != "" {
		e.signErrors.WithLabelValues(r.SigningError).Inc()
	}
	switch {
	case r.Charged != "":
		e.payments.WithLabelValues(paymentPaid).Inc()
		if v, err := strconv.ParseFloat(r.Charged, 64); err == nil && v >= 0 {
			e.spent.WithLabelValues(e.currency(r.Currency)).Add(v)
		}
	case r.NotPaid != "":
		e.payments.WithLabelValues(r.NotPaid).Inc()
	case r.Price != "":
		e.payments.WithLabelValues(paymentUncharged).Inc()
	}
}

// currency is the spent label of cur: cur itself while fewer than
// maxSpentCurrencies are in use, "other" after.
func (e *egressMetrics) currency(cur string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.currencies[cur] {
		return cur
	}
	if len(e.currencies) >= maxSpentCurrencies {
		return "other"
	}
	e.currencies[cur] = true
	return cur
}
