package proxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// PolitenessMetrics count politeness's waits and refusals. It
// is a politeness.Observer; a nil *PolitenessMetrics records nothing.
type PolitenessMetrics struct {
	requests *prometheus.CounterVec
	wait     *prometheus.HistogramVec
}

// NewPolitenessMetrics registers on reg:
//
//   - robotsproxy_politeness_requests_total{cause, outcome}: requests that
//     waited (outcome "waited") or were refused with 429 (outcome
//     "rejected"), by cause: crawl-delay, backoff or host-concurrency. A
//     request that waited for two causes counts once for each.
//   - robotsproxy_politeness_wait_seconds{cause}: how long requests waited,
//     per cause.
func NewPolitenessMetrics(reg prometheus.Registerer) *PolitenessMetrics {
	m := &PolitenessMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_politeness_requests_total",
			Help: "Requests that politeness held (outcome waited) or refused with 429 (outcome rejected), by cause (crawl-delay, backoff, host-concurrency).",
		}, []string{"cause", "outcome"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "robotsproxy_politeness_wait_seconds",
			Help:    "How long politeness held requests, in seconds, by cause.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120},
		}, []string{"cause"}),
	}
	reg.MustRegister(m.requests, m.wait)
	return m
}

// Waited implements politeness.Observer.
func (m *PolitenessMetrics) Waited(cause politeness.Cause, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(string(cause), "waited").Inc()
	m.wait.WithLabelValues(string(cause)).Observe(d.Seconds())
}

// Rejected implements politeness.Observer.
func (m *PolitenessMetrics) Rejected(cause politeness.Cause) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(string(cause), "rejected").Inc()
}
