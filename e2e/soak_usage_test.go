package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// usage is the proxy's resource use at one moment, from its /metrics
// (RSS in bytes, goroutines, open file descriptors; the Go heap in use and
// the heap goal in bytes and completed GC cycles, which explain the RSS),
// and the connections open at the soak origins, which are the proxy's
// upstream connections.
type usage struct {
	rss, goroutines, fds     float64
	heapInuse, heapGoal, gcs float64
	originConns              int64
}

// usageProbe reads usage from a running proxy.
type usageProbe struct {
	client  *http.Client
	metrics string // http://ADMIN/metrics
	origin  *soakOrigin
	pid     int
}

func newUsageProbe(p *proxyProcess, o *soakOrigin) *usageProbe {
	return &usageProbe{
		client:  &http.Client{Timeout: 10 * time.Second},
		metrics: "http://" + p.adminAddr + "/metrics",
		origin:  o,
		pid:     p.cmd.Process.Pid,
	}
}

// scrape returns the proxy's metrics as name{labels} -> value.
func (p *usageProbe) scrape() (map[string]float64, error) {
	resp, err := p.client.Get(p.metrics)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: status %d, error %v", p.metrics, resp.StatusCode, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, nil
}

func (p *usageProbe) read() (usage, error) {
	m, err := p.scrape()
	if err != nil {
		return usage{}, err
	}
	u := usage{
		rss: m["process_resident_memory_bytes"], goroutines: m["go_goroutines"], fds: m["process_open_fds"],
		heapInuse: m["go_memstats_heap_inuse_bytes"], heapGoal: m["go_memstats_next_gc_bytes"], gcs: m["go_gc_duration_seconds_count"],
		originConns: p.origin.open.Load(),
	}
	if u.rss == 0 || u.goroutines == 0 || u.fds == 0 {
		return u, fmt.Errorf("scrape %s: process_resident_memory_bytes, go_goroutines or process_open_fds missing", p.metrics)
	}
	return u, nil
}

func (p *usageProbe) mustRead(t *testing.T) usage {
	t.Helper()
	u, err := p.read()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// steady reads usage every 500ms until goroutines and fds are the same
// twice in a row (connections the clients closed have been noticed), for
// at most 10s, and returns the last reading.
func (p *usageProbe) steady(t *testing.T) usage {
	t.Helper()
	prev := p.mustRead(t)
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		u := p.mustRead(t)
		if u.goroutines == prev.goroutines && u.fds == prev.fds {
			return u
		}
		prev = u
	}
	return prev
}

// peakRSS is VmHWM of /proc/PID/status in bytes: the kernel's record of
// the highest RSS, between the 1s samples too; 0 when unreadable.
func (p *usageProbe) peakRSS() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// peakSampler reads usage every second and keeps the largest value of
// each figure (not necessarily from the same second), logging one line
// every logEvery samples with the requests sent so far.
type peakSampler struct {
	probe    *usageProbe
	sent     *atomic.Int64
	logEvery int

	mu      sync.Mutex
	peak    usage
	samples int
	errs    int
	lastErr error
}

func (s *peakSampler) run(ctx context.Context, t *testing.T) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for start := time.Now(); ; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		u, err := s.probe.read()
		s.mu.Lock()
		if err != nil {
			s.errs++
			s.lastErr = err
		} else {
			s.samples++
			s.peak = maxUsage(s.peak, u)
		}
		n := s.samples
		s.mu.Unlock()
		if err == nil && n%s.logEvery == 0 {
			t.Logf("%4.0fs %9d sent (warm-up included)  %s", time.Since(start).Seconds(), s.sent.Load(), u)
		}
	}
}

func (s *peakSampler) result() (peak usage, samples, errs int, lastErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.samples, s.errs, s.lastErr
}

func maxUsage(a, b usage) usage {
	return usage{
		rss: max(a.rss, b.rss), goroutines: max(a.goroutines, b.goroutines), fds: max(a.fds, b.fds),
		heapInuse: max(a.heapInuse, b.heapInuse), heapGoal: max(a.heapGoal, b.heapGoal), gcs: max(a.gcs, b.gcs),
		originConns: max(a.originConns, b.originConns),
	}
}

func (u usage) String() string {
	return fmt.Sprintf("rss %.1f MiB (heap %.1f, goal %.1f)  goroutines %.0f  fds %.0f  upstream conns %d",
		u.rss/(1<<20), u.heapInuse/(1<<20), u.heapGoal/(1<<20), u.goroutines, u.fds, u.originConns)
}

// withinOf reports the figures of u that exceed base by more than frac
// (0.10: 10%), as "name got X, want at most Y" strings.
func (u usage) withinOf(base usage, frac float64) []string {
	var out []string
	check := func(name string, got, ref float64, unit func(float64) string) {
		if limit := ref * (1 + frac); got > limit {
			out = append(out, fmt.Sprintf("%s %s, want at most %s (%s + %.0f%%)", name, unit(got), unit(limit), unit(ref), frac*100))
		}
	}
	mib := func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	check("RSS", u.rss, base.rss, mib)
	check("goroutines", u.goroutines, base.goroutines, count)
	check("open fds", u.fds, base.fds, count)
	return out
}
