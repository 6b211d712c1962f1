package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/mitm"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Metrics are robotsproxy's Prometheus metrics. A nil *Metrics is valid and
// records nothing.
type Metrics struct {
	requests     *prometheus.CounterVec
	fetches      *prometheus.CounterVec
	fetchLatency *prometheus.HistogramVec
	throttled    prometheus.Counter
	client       clientMetrics
}

// NewMetrics registers the metrics on reg. cachedAuthorities reports the
// number of authorities in the robots.txt cache.
func NewMetrics(reg prometheus.Registerer, cachedAuthorities func() int) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_requests_total",
			Help: "Proxy requests by decision (allow, deny, none), reason, and enforced (false: a robots.txt denial forwarded in report mode).",
		}, []string{"decision", "reason", "enforced"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_robots_fetches_total",
			Help: "robots.txt fetches by access result (RFC 9309 2.3.1).",
		}, []string{"result"}),
		fetchLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "robotsproxy_robots_fetch_duration_seconds",
			Help:    "robots.txt fetch latency in seconds, by access result.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"result"}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_auth_throttled_total",
			Help: "Proxy requests refused with 429 because their client or user had too many failed proxy logins.",
		}),
	}
	cached := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "robotsproxy_cached_authorities",
		Help: "Authorities (scheme, host, port) in the robots.txt cache.",
	}, func() float64 { return float64(cachedAuthorities()) })
	reg.MustRegister(m.requests, m.fetches, m.fetchLatency, m.throttled, cached)
	m.client = newClientMetrics(reg)
	return m
}

// ObserveFetch records one robots.txt fetch.
func (m *Metrics) ObserveFetch(a policy.Access) {
	if m == nil {
		return
	}
	m.fetches.WithLabelValues(string(a.Result)).Inc()
	m.fetchLatency.WithLabelValues(string(a.Result)).Observe(a.Duration.Seconds())
}

func (m *Metrics) countRequest(decision, reason string, enforced bool) {
	if m == nil {
		return
	}
	e := "true"
	if !enforced {
		e = "false"
	}
	m.requests.WithLabelValues(decision, reason, e).Inc()
	if reason == string(policy.ReasonAuthThrottled) {
		m.throttled.Inc()
	}
}

// RegisterCertMetrics exports the leaf-certificate cache of an intercepting
// proxy (see package mitm): stats is called at each scrape.
func RegisterCertMetrics(reg prometheus.Registerer, stats func() mitm.CertStats) {
	counter := func(name, help string, f func(mitm.CertStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(stats())) })
	}
	reg.MustRegister(
		counter("robotsproxy_mitm_cert_hits_total", "Leaf certificates served from the cache.",
			func(s mitm.CertStats) uint64 { return s.Hits }),
		counter("robotsproxy_mitm_cert_misses_total", "Leaf certificate lookups that missed the cache.",
			func(s mitm.CertStats) uint64 { return s.Misses }),
		counter("robotsproxy_mitm_certs_signed_total", "Leaf certificates signed with the operator's CA.",
			func(s mitm.CertStats) uint64 { return s.Signed }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "robotsproxy_mitm_cached_certs", Help: "Leaf certificates in the cache."},
			func() float64 { return float64(stats().Entries) }),
	)
}
