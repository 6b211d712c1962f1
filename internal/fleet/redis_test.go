package fleet

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/redistest"
	"github.com/robotsproxy/robotsproxy/robots"
)

// startRedis starts a redis-server for the test (see redistest.Start).
func startRedis(t testing.TB) *redistest.Server { return redistest.Start(t) }

// syncLog is a zerolog destination safe for concurrent use.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), msg)
}

// String returns what was logged.
func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// replica is one Store as a proxy replica holds it, with its own metrics
// and log.
type replica struct {
	*Store
	reg *prometheus.Registry
	log *syncLog
}

// newReplica connects a Store to url with small test TTLs; change edits
// the options first.
func newReplica(t *testing.T, url string, change func(*Options)) *replica {
	t.Helper()
	r := &replica{reg: prometheus.NewRegistry(), log: &syncLog{}}
	o := Options{URL: url, KeyPrefix: "test:", WaitFor: 2 * time.Second, LockTTL: 3 * time.Second,
		TTLRules: access.TTLRules{MinTTL: access.Off, MaxTTL: time.Hour, UnreachableRetry: time.Minute},
		Parse:    robots.Options{}, Registerer: r.reg, Log: zerolog.New(r.log)}
	if change != nil {
		change(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.Store = s
	return r
}

// counter returns the value of a metric of the store: "up", "hits",
// "misses", "lock_waits", "errors/OP" or "fallbacks/WHAT".
func (r *replica) counter(name string) float64 {
	family, label, _ := strings.Cut(name, "/")
	full := map[string]string{"up": "robotsproxy_shared_up", "hits": "robotsproxy_shared_hits_total",
		"misses": "robotsproxy_shared_misses_total", "lock_waits": "robotsproxy_shared_lock_waits_total",
		"errors": "robotsproxy_shared_errors_total", "fallbacks": "robotsproxy_shared_fallbacks_total"}[family]
	mfs, err := r.reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != full {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	panic("no metric " + name)
}

// flush empties the store.
func flush(t *testing.T, s *Store) {
	t.Helper()
	if err := s.rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
