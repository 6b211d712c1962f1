package politeness

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count the Limiter's waits and refusals. It is an Observer; a
// nil *Metrics records nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	wait     *prometheus.HistogramVec
}

// NewMetrics registers on reg:
//
//   - robotsproxy_politeness_requests_total{cause, outcome}: requests that
//     waited (outcome "waited") or were refused with 429 (outcome
//     "rejected"), by cause: crawl-delay, backoff or host-concurrency. A
//     request that waited for two causes counts once for each.
//   - robotsproxy_politeness_wait_seconds{cause}: how long requests waited,
//     per cause.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
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

// Waited implements Observer.
func (m *Metrics) Waited(cause Cause, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(string(cause), "waited").Inc()
	m.wait.WithLabelValues(string(cause)).Observe(d.Seconds())
}

// Rejected implements Observer.
func (m *Metrics) Rejected(cause Cause) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(string(cause), "rejected").Inc()
}
