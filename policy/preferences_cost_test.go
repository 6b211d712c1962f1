package policy_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// manyTies is a group of n Content-Usage lines that all tie: 19,000 of them
// make a file of about 494 KB, within the default parse limits.
func manyTies(n int) []byte {
	return []byte("User-agent: *\n" + strings.Repeat("Content-Usage: train-ai=n\n", n))
}

// TestFromRobotsManyTiesBounded bounds what the proxy allocates per request
// for a file of 19,000 tied Content-Usage lines (Usage, Extras and
// FromRobots), and checks what it reports.
func TestFromRobotsManyTiesBounded(t *testing.T) {
	r := robots.Parse(manyTies(19000))
	p := policy.RobotsPreferences(r.Usage("/a", "bot"), r.Extras("bot"))
	if len(p) != 1 || p[0].String() != "line 2: Content-Usage: train-ai=n" || p[0].Value != policy.UsageNo {
		t.Fatalf("got %v, want train-ai=n from line 2", p)
	}
	const n, limit = 20, 32 << 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		_ = policy.RobotsPreferences(r.Usage("/a", "bot"), r.Extras("bot"))
	}
	runtime.ReadMemStats(&after)
	if got := (after.TotalAlloc - before.TotalAlloc) / n; got > limit {
		t.Errorf("got %d B per request, want at most %d", got, limit)
	}
}

// BenchmarkFromRobotsManyTies measures what the proxy does per request with
// a file of 19,000 tied Content-Usage lines: Usage, Extras and FromRobots.
func BenchmarkFromRobotsManyTies(b *testing.B) {
	r := robots.Parse(manyTies(19000))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = policy.RobotsPreferences(r.Usage("/a", "bot"), r.Extras("bot"))
	}
}

// BenchmarkFromRobotsLongStatements measures the same on 1024 tied rules of
// ~480 octets (a file of ~500 KB).
func BenchmarkFromRobotsLongStatements(b *testing.B) {
	r := robots.Parse([]byte("User-agent: *\n" + strings.Repeat("Content-Usage: "+strings.Repeat("x=1, ", 94)+"train-ai=y\n", 1024)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = policy.RobotsPreferences(r.Usage("/a", "bot"), r.Extras("bot"))
	}
}
