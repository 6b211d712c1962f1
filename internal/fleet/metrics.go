package fleet

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// metrics are the store's Prometheus metrics.
type metrics struct {
	up        prometheus.Gauge
	hits      prometheus.Counter
	misses    prometheus.Counter
	lockWaits prometheus.Counter
	errors    *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
}

// Error operations, the "op" label of robotsproxy_shared_errors_total.
const (
	opRead       = "read"       // reading a shared robots.txt result
	opWrite      = "write"      // storing one
	opLock       = "lock"       // taking or releasing a fetch lock (the claim of a cold authority, which reads its record or takes the lock in one script, included)
	opPoliteness = "politeness" // a politeness script or lease
	opSpend      = "spend"      // a pay per crawl budget script (no fallback: nothing is paid)
	opPing       = "ping"       // a readiness or recovery probe
)

// Fallback kinds, the "what" label of robotsproxy_shared_fallbacks_total.
const (
	fallbackRobots     = "robots"
	fallbackPoliteness = "politeness"
)

// newMetrics registers the metrics on reg (nil: not registered).
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_shared_up",
			Help: "1 while the shared store (shared.redis_url) answers, 0 while this replica falls back to local robots.txt fetching and politeness.",
		}),
		hits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_shared_hits_total",
			Help: "Local robots.txt cache misses answered from the shared store (no fetch from the origin).",
		}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_shared_misses_total",
			Help: "Local robots.txt cache misses the shared store could not answer: this replica fetched from the origin (holding the fleet lock, or after waiting robots.timeout for it).",
		}),
		lockWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_shared_lock_waits_total",
			Help: "robots.txt fetches this replica waited for because another replica held the authority's fetch lock.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_shared_errors_total",
			Help: "Shared store operations that failed, by operation (read, write, lock, politeness, spend, ping); unreadable values count as read errors.",
		}, []string{"op"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_shared_fallbacks_total",
			Help: "Operations done with local state because the shared store was unreachable, by kind (robots, politeness).",
		}, []string{"what"}),
	}
	for _, op := range []string{opRead, opWrite, opLock, opPoliteness, opPing} {
		m.errors.WithLabelValues(op)
	}
	for _, w := range []string{fallbackRobots, fallbackPoliteness} {
		m.fallbacks.WithLabelValues(w)
	}
	if reg != nil {
		reg.MustRegister(m.up, m.hits, m.misses, m.lockWaits, m.errors, m.fallbacks)
	}
	return m
}

// Record refusal reasons, the "reason" label of
// robotsproxy_shared_records_refused_total.
const (
	refusedURL = "url" // the record names another robots.txt URL than its key's
	refusedMAC = "mac" // no valid MAC under the record key (shared.record_key_file)
	refusedAge = "age" // the record outlives the TTL it was shared for (written again)
)

// newRefusedMetric returns robotsproxy_shared_records_refused_total,
// registered on reg (nil: not registered).
func newRefusedMetric(reg prometheus.Registerer) *prometheus.CounterVec {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsproxy_shared_records_refused_total",
		Help: "Shared robots.txt records refused and fetched again, by reason: url (the record names another robots.txt URL than its key's), mac (no valid MAC under shared.record_key_file) or age (the record outlives the TTL it was shared for: written again).",
	}, []string{"reason"})
	for _, r := range []string{refusedURL, refusedMAC, refusedAge} {
		refused.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(refused)
	}
	return refused
}

// poolStater is a go-redis client with connection pool statistics (each
// of *redis.Client and *redis.ClusterClient; a cluster's are summed over
// its nodes).
type poolStater interface{ PoolStats() *redis.PoolStats }

// Descriptions of the connection pool's metrics, read at each scrape.
var (
	poolHitsDesc = prometheus.NewDesc("robotsproxy_shared_pool_hits_total",
		"Commands to the shared store that found an idle connection in the pool.", nil, nil)
	poolMissesDesc = prometheus.NewDesc("robotsproxy_shared_pool_misses_total",
		"Commands to the shared store that found no idle connection in the pool (a new connection was dialled, or the command waited).", nil, nil)
	poolWaitsDesc = prometheus.NewDesc("robotsproxy_shared_pool_waits_total",
		"Commands to the shared store that waited for a connection because the pool (shared.pool_size) was exhausted.", nil, nil)
	poolWaitSecondsDesc = prometheus.NewDesc("robotsproxy_shared_pool_wait_seconds_total",
		"Time commands to the shared store spent waiting for a connection of the pool.", nil, nil)
	poolTimeoutsDesc = prometheus.NewDesc("robotsproxy_shared_pool_timeouts_total",
		"Commands to the shared store that gave up waiting for a connection of the pool.", nil, nil)
	poolTotalDesc = prometheus.NewDesc("robotsproxy_shared_pool_connections",
		"Connections to the shared store, idle or in use (at most shared.pool_size per node).", nil, nil)
	poolIdleDesc = prometheus.NewDesc("robotsproxy_shared_pool_idle_connections",
		"Idle connections to the shared store.", nil, nil)
)

// poolCollector exports go-redis's connection pool statistics.
type poolCollector struct{ c poolStater }

// Describe implements prometheus.Collector.
func (p poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolHitsDesc, poolMissesDesc, poolWaitsDesc, poolWaitSecondsDesc,
		poolTimeoutsDesc, poolTotalDesc, poolIdleDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.c.PoolStats()
	if s == nil {
		return
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	counter(poolHitsDesc, float64(s.Hits))
	counter(poolMissesDesc, float64(s.Misses))
	counter(poolWaitsDesc, float64(s.WaitCount))
	counter(poolWaitSecondsDesc, float64(s.WaitDurationNs)/1e9)
	counter(poolTimeoutsDesc, float64(s.Timeouts))
	ch <- prometheus.MustNewConstMetric(poolTotalDesc, prometheus.GaugeValue, float64(s.TotalConns))
	ch <- prometheus.MustNewConstMetric(poolIdleDesc, prometheus.GaugeValue, float64(s.IdleConns))
}
