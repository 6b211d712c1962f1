package proxy

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCountRequestBindsChildren: each label set of
// robotsproxy_requests_total counts into its own child, including under
// concurrent use, and counting a request whose label set was seen before
// allocates nothing.
func TestCountRequestBindsChildren(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, func() int { return 0 })
	type labels struct{ decision, reason, enforced string }
	counts := []struct {
		decision, reason string
		enforced         bool
		n                int
	}{
		{"allow", "no-matching-rule", true, 3},
		{"deny", "rule", true, 2},
		{"deny", "rule", false, 5},
		{"none", "not-proxied", true, 1},
	}
	var wg sync.WaitGroup
	for _, c := range counts {
		for range c.n {
			wg.Go(func() { m.countRequest(c.decision, c.reason, c.enforced) })
		}
	}
	wg.Wait()
	got := map[labels]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "robotsproxy_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			var l labels
			for _, p := range s.GetLabel() {
				switch p.GetName() {
				case "decision":
					l.decision = p.GetValue()
				case "reason":
					l.reason = p.GetValue()
				case "enforced":
					l.enforced = p.GetValue()
				}
			}
			got[l] = s.GetCounter().GetValue()
		}
	}
	for _, c := range counts {
		l := labels{c.decision, c.reason, map[bool]string{true: "true", false: "false"}[c.enforced]}
		if got[l] != float64(c.n) {
			t.Errorf("robotsproxy_requests_total%v: got %v, want %d", l, got[l], c.n)
		}
	}
	if len(got) != len(counts) {
		t.Errorf("got %d series %v, want %d", len(got), got, len(counts))
	}
	if allocs := testing.AllocsPerRun(100, func() { m.countRequest("deny", "rule", false) }); allocs != 0 {
		t.Errorf("countRequest of a known label set: got %v allocations, want 0", allocs)
	}
}

// BenchmarkCountRequest: counting a request with a bound child, from
// concurrent goroutines.
func BenchmarkCountRequest(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), func() int { return 0 })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.countRequest("allow", "no-matching-rule", true)
		}
	})
}
