package access

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// BenchmarkCacheMemory fills a cache bounded by MaxBytes (default 128 MiB;
// ROBOTSPROXY_BENCH_CACHE_MB sets it) with compiled 500 KiB robots.txt
// files, twice as many as fit, each fetched and compiled as a miss, and
// reports against the bound (all in MiB): the octets the cache accounts
// (cache-MiB), the live heap after a collection (heap-MiB), the resident
// set then (rss-MiB) and at its peak during the fill (peak-rss-MiB), and the
// process's resident set before the fill (base-rss-MiB). With
// gomemlimit=bound+64MiB the Go runtime's soft memory limit is set to the
// bound plus 64 MiB (GOMEMLIMIT). The documented overhead is checked: the
// peak resident set stays under the bound plus 128 MiB with that limit,
// and under twice the bound plus 128 MiB without (the collector lets the
// heap grow to twice the live heap). Run it once per process:
//
//	go test -run '^$' -bench CacheMemory/gomemlimit=off -benchtime 1x ./policy/
//	go test -run '^$' -bench CacheMemory/gomemlimit=bound -benchtime 1x ./policy/
func BenchmarkCacheMemory(b *testing.B) {
	bound := int64(128)
	if mb, err := strconv.ParseInt(os.Getenv("ROBOTSPROXY_BENCH_CACHE_MB"), 10, 64); err == nil && mb > 0 {
		bound = mb
	}
	bound <<= 20
	for _, limit := range []string{"off", "bound+64MiB"} {
		b.Run("gomemlimit="+limit, func(b *testing.B) {
			if limit != "off" {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(bound + 64<<20))
			}
			for range b.N {
				peak := fillCache(b, bound)
				want := 2*bound + 128<<20
				if limit != "off" {
					want = bound + 128<<20
				}
				if peak > want {
					b.Errorf("got peak RSS %d MiB, want at most %d MiB", peak>>20, want>>20)
				}
			}
		})
	}
}

// fillCache fills a cache as BenchmarkCacheMemory says and returns the
// peak resident set.
func fillCache(b *testing.B, bound int64) int64 {
	body := []byte(realisticRobots(500 << 10))
	fetch := func(_ context.Context, scheme, authority string) policy.Access {
		url := policy.RobotsURL(scheme, authority)
		raw := append([]byte(nil), body...) // as a fetch reads it
		return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1,
			Robots: robots.Parse(raw), FetchedAt: time.Now(), Raw: raw}
	}
	runtime.GC()
	debug.FreeOSMemory()
	base := rss(b, "VmRSS")
	resetPeakRSS(b)
	c := NewCache(fetch, CacheOptions{MaxBytes: bound})
	per := entrySize("http://host-000000.example:80", &entry{latest: fetch(context.Background(), "http", "host-000000.example:80")})
	n := 2 * int(bound/per)
	for i := range n {
		c.Get(context.Background(), "http", fmt.Sprintf("host-%06d.example:80", i))
	}
	peak := rss(b, "VmHWM")
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	now := rss(b, "VmRSS")
	if c.Bytes() > bound {
		b.Errorf("got %d octets accounted, want at most the bound, %d", c.Bytes(), bound)
	}
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(float64(c.Len()), "entries")
	b.ReportMetric(mib(bound), "bound-MiB")
	b.ReportMetric(mib(c.Bytes()), "cache-MiB")
	b.ReportMetric(mib(int64(m.HeapAlloc)), "heap-MiB")
	b.ReportMetric(mib(base), "base-rss-MiB")
	b.ReportMetric(mib(now), "rss-MiB")
	b.ReportMetric(mib(peak), "peak-rss-MiB")
	runtime.KeepAlive(c)
	return peak
}

// rss returns a size field of /proc/self/status (VmRSS, VmHWM) in octets.
func rss(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS resets VmHWM to the current resident set.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak RSS not reset: %v", err)
	}
}
