package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// A password flood: 20 workers send 10 wrong proxy passwords each
// while another client, whose credentials are remembered, keeps making
// requests.
const (
	floodWorkers  = 20
	floodAttempts = 10
)

// floodResult is what runAuthFlood measured.
type floodResult struct {
	baseline []time.Duration // the other client's latencies before the flood
	during   []time.Duration // and while it ran
	others   map[int]int     // the other client's statuses
	flood    map[int]int     // flood responses by status (407: bcrypt ran)
	wall     time.Duration   // how long the flood took
}

// runAuthFlood runs the flood against a fresh proxy whose users' hashes
// have bcrypt cost, throttled by o on clock (nil: time.Now).
func runAuthFlood(tb testing.TB, cost int, o identity.ThrottleOptions, clock *testkit.Clock) floodResult {
	tb.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		_, _ = io.WriteString(w, "page")
	}))
	tb.Cleanup(origin.Close)
	guard := &netguard.Guard{AllowPrivate: true}
	popts := policy.Options{
		Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache:      access.NewCache(access.NewFetcher(access.FetcherOptions{Guard: guard}).Fetch, access.CacheOptions{}),
	}
	throttledPinner(tb, cost, o, clock)(&popts)
	srv := httptest.NewServer(proxy.New(proxy.Options{Policy: policy.New(popts),
		Transport: proxy.NewTransport(proxy.TransportOptions{AllowPrivate: guard.AllowPrivate, AllowPrivateRanges: guard.Allow}), Audit: io.Discard}))
	tb.Cleanup(srv.Close)
	target := origin.URL + "/page"
	client := func(user, password string) *http.Client {
		u, _ := url.Parse(srv.URL)
		u.User = url.UserPassword(user, password)
		return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}, Timeout: time.Minute}
	}
	get := func(c *http.Client) (int, time.Duration) {
		start := time.Now()
		resp, err := c.Get(target)
		if err != nil {
			tb.Errorf("GET %s: %v", target, err)
			return 0, time.Since(start)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}

	res := floodResult{others: map[int]int{}, flood: map[int]int{}}
	other := client("alice", "pw-alice")
	for i := range 51 { // the first request fetches robots.txt and runs bcrypt once
		code, d := get(other)
		res.others[code]++
		if i > 0 {
			res.baseline = append(res.baseline, d)
		}
	}
	var mu sync.Mutex
	var workers sync.WaitGroup
	done := make(chan struct{})
	otherDone := make(chan struct{})
	go func() {
		defer close(otherDone)
		for {
			select {
			case <-done:
				return
			default:
			}
			code, d := get(other)
			mu.Lock()
			res.others[code]++
			res.during = append(res.during, d)
			mu.Unlock()
		}
	}()
	start := time.Now()
	for w := range floodWorkers {
		workers.Go(func() {
			c := client("bob", "wrong-"+string(rune('a'+w)))
			for range floodAttempts {
				code, _ := get(c)
				mu.Lock()
				res.flood[code]++
				mu.Unlock()
			}
		})
	}
	workers.Wait()
	res.wall = time.Since(start)
	close(done)
	<-otherDone
	return res
}

// percentile returns the p-th percentile (0-100) of ds, 0 when empty.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// mean returns the mean of ds, 0 when empty.
func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(max(1, len(ds)))
}

// defaultThrottle is the configuration's default identity.auth_throttle.
var defaultThrottle = identity.ThrottleOptions{FailuresPerMinute: 10, Burst: 5, MaxConcurrentChecks: 2}

// TestAuthFlood reproduces the flood with cheap hashes: with the default
// throttle only the burst reaches bcrypt, the rest get 429, and the other
// client is never refused. Latencies are logged, not asserted on; see
// BenchmarkAuthFlood for the real bcrypt cost.
func TestAuthFlood(t *testing.T) {
	tests := []struct {
		name      string
		o         identity.ThrottleOptions
		want407   int
		want429   int
		wantOther int // the other client's 200s at least
	}{
		{"unthrottled", identity.ThrottleOptions{}, floodWorkers * floodAttempts, 0, 51},
		{"default throttle", defaultThrottle, 5, floodWorkers*floodAttempts - 5, 51},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) // frozen: no refill
			r := runAuthFlood(t, bcrypt.MinCost, tt.o, clock)
			if r.flood[407] != tt.want407 || r.flood[429] != tt.want429 || len(r.flood) > 2 {
				t.Errorf("flood responses: got %v, want %d x 407 (bcrypt ran) and %d x 429", r.flood, tt.want407, tt.want429)
			}
			if len(r.others) != 1 || r.others[200] < tt.wantOther {
				t.Errorf("the other client's responses: got %v, want only 200s, at least %d", r.others, tt.wantOther)
			}
			t.Logf("%s: other client p50 %v before, p50 %v p99 %v mean %v during the flood (%d requests); flood took %v: %v",
				tt.name, percentile(r.baseline, 50), percentile(r.during, 50), percentile(r.during, 99), mean(r.during), len(r.during), r.wall, r.flood)
		})
	}
}

// BenchmarkAuthFlood measures the other client's latency during the flood
// with bcrypt's default cost (about 70 ms a check), without and with the
// default throttle. One iteration is one whole flood:
//
//	go test -run '^$' -bench AuthFlood -benchtime 1x -count 3 ./proxy/
func BenchmarkAuthFlood(b *testing.B) {
	for _, c := range []struct {
		name string
		o    identity.ThrottleOptions
	}{{"throttle=off", identity.ThrottleOptions{}}, {"throttle=default", defaultThrottle}} {
		b.Run(c.name, func(b *testing.B) {
			var before, during []time.Duration
			var checks, wall float64
			for range b.N {
				r := runAuthFlood(b, bcrypt.DefaultCost, c.o, nil)
				before, during = append(before, r.baseline...), append(during, r.during...)
				checks += float64(r.flood[407])
				wall += r.wall.Seconds()
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(percentile(before, 50)), "p50-before-ms")
			b.ReportMetric(ms(percentile(during, 50)), "p50-during-ms")
			b.ReportMetric(ms(percentile(during, 99)), "p99-during-ms")
			b.ReportMetric(ms(mean(during)), "mean-during-ms")
			b.ReportMetric(float64(len(during))/float64(b.N), "requests-during")
			b.ReportMetric(checks/float64(b.N), "bcrypt-checks")
			b.ReportMetric(wall/float64(b.N), "flood-s")
		})
	}
}
