package proxy

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/auditlog"
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
	egress       *egressMetrics // signing and paying
	bound        boundCounters  // children of requests, per label set
}

// requestLabels is a label set of robotsproxy_requests_total.
type requestLabels struct {
	decision, reason string
	enforced         bool
}

// boundCounters binds each label set of robotsproxy_requests_total to its
// child once: counting a request is then a lock-free map read, not
// WithLabelValues's hashing and locking. The label values are the
// decisions and the policy's reasons, a small fixed set, so the map stays
// small; it is copied on each addition.
type boundCounters struct {
	mu sync.Mutex // serialises additions
	m  atomic.Pointer[map[requestLabels]prometheus.Counter]
}

// counter returns the child of vec for l, binding it on first use.
func (b *boundCounters) counter(vec *prometheus.CounterVec, l requestLabels) prometheus.Counter {
	if m := b.m.Load(); m != nil {
		if c, ok := (*m)[l]; ok {
			return c
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.m.Load()
	if old != nil {
		if c, ok := (*old)[l]; ok {
			return c
		}
	}
	enforced := "true"
	if !l.enforced {
		enforced = "false"
	}
	c := vec.WithLabelValues(l.decision, l.reason, enforced)
	m := map[requestLabels]prometheus.Counter{l: c}
	if old != nil {
		maps.Copy(m, *old)
	}
	b.m.Store(&m)
	return c
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
	m.egress = newEgressMetrics(reg)
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
	m.bound.counter(m.requests, requestLabels{decision, reason, enforced}).Inc()
	if reason == string(auditlog.ReasonAuthThrottled) {
		m.throttled.Inc()
	}
}

// RegisterCacheMetrics exports the memory the robots.txt cache retains,
// robotsproxy_cache_bytes, in octets as the cache accounts it
// (cache.max_bytes bounds it); bytes is called at each scrape.
func RegisterCacheMetrics(reg prometheus.Registerer, bytes func() int64) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "robotsproxy_cache_bytes",
		Help: "Memory retained by the robots.txt cache in octets (compiled rules, URLs and per-entry overhead), bounded by cache.max_bytes.",
	}, func() float64 { return float64(bytes()) }))
}
