package fleet

import (
	"context"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// TestPoolMetrics: go-redis's connection pool statistics are exported.
func TestPoolMetrics(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	sc := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
	for range 3 {
		if _, err := sc.Pause(context.Background(), politeness.Key{Token: "bot", Authority: "http://m.example:80"}); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				got[mf.GetName()] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				got[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	for _, name := range []string{"robotsproxy_shared_pool_hits_total", "robotsproxy_shared_pool_misses_total",
		"robotsproxy_shared_pool_waits_total", "robotsproxy_shared_pool_wait_seconds_total",
		"robotsproxy_shared_pool_timeouts_total", "robotsproxy_shared_pool_connections",
		"robotsproxy_shared_pool_idle_connections"} {
		if _, ok := got[name]; !ok {
			t.Errorf("metric %s not exported", name)
		}
	}
	if got["robotsproxy_shared_pool_connections"] < 1 || got["robotsproxy_shared_pool_hits_total"] < 1 {
		t.Errorf("after 4 commands: %v connections, %v hits; want at least 1 of each",
			got["robotsproxy_shared_pool_connections"], got["robotsproxy_shared_pool_hits_total"])
	}
}
