package proxy_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// sentRecorder is a LocalScheduler that records the claims ended by Sent,
// and when each request sent was written.
type sentRecorder struct {
	*politeness.LocalScheduler
	mu    sync.Mutex
	sent  []bool      // each Sent's sent argument
	wrote []time.Time // for each send, when its write returned
}

func newSentRecorder() *sentRecorder {
	return &sentRecorder{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{})}
}

func (r *sentRecorder) Sent(ctx context.Context, k politeness.Key, id uint64, delay, ago time.Duration, sent bool) error {
	// The write returned ago before the Limiter's call; this clock is
	// read after the Limiter's, so wrote is no later than the time the
	// scheduler counts the next turn from.
	wrote := time.Now().Add(-ago)
	r.mu.Lock()
	r.sent = append(r.sent, sent)
	if sent {
		r.wrote = append(r.wrote, wrote)
	}
	r.mu.Unlock()
	return r.LocalScheduler.Sent(ctx, k, id, delay, ago, sent)
}

func (r *sentRecorder) calls() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.sent...)
}

func (r *sentRecorder) writes() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.wrote...)
}

// checkSpacing checks the crawl delay at the origin: each request reached
// it (the kernel's receive timestamp) at least delay after the previous
// one's write returned in the proxy. That is what the proxy promises,
// measured with no slack for scheduling: a timestamp is never earlier
// than the write that sent it, however late the origin's handler runs.
// The only slack is clock's: the timestamps are on the wall clock, the
// writes on the monotonic one (see testkit/timing.go). It logs the gaps
// between arrivals too, and how much later than the write returned the
// kernel received a request (its delivery, deferred on a busy machine):
// what an arrival gap can lose to the loopback path, which no proxy
// controls.
func checkSpacing(t *testing.T, o *politeOrigin, r *sentRecorder, delay time.Duration, clock testkit.ClockCheck) {
	t.Helper()
	seen, wrote := o.seen(), r.writes()
	if len(seen) != len(wrote) {
		t.Fatalf("the origin saw %d requests, the proxy wrote %d", len(seen), len(wrote))
	}
	slack := clock.Drift()
	least, after, latest := time.Hour, time.Hour, time.Duration(0)
	for i := range seen {
		if !seen[i].stamped {
			t.Logf("request %d has no kernel timestamp: not measured", i)
			continue
		}
		latest = max(latest, seen[i].at.Sub(wrote[i].Round(0)))
		if i == 0 {
			continue
		}
		g := seen[i].at.Sub(wrote[i-1].Round(0))
		after = min(after, g)
		if g < delay-slack {
			t.Errorf("request %d reached the origin %v after request %d left the proxy, want at least %v (clock slack %v)", i, g, i-1, delay, slack)
		}
		if seen[i-1].stamped {
			least = min(least, seen[i].at.Sub(seen[i-1].at))
		}
	}
	t.Logf("crawl delay %v: arrival after the previous write returned at least %v; smallest gap between arrivals %v; delivery at most %v after the write returned", delay, after, least, latest)
}

// TestCrawlDelayCountsFromTheSend: with CountFromSend, the proxy's
// connections report each request's send, plain and inside an
// intercepted tunnel (the TLS connection's own connection): each claim is ended as sent (the next request is not
// held to the claim's lease), the spacing holds at the origin, and a
// request whose origin cannot be reached gives its turn back unsent.
func TestCrawlDelayCountsFromTheSend(t *testing.T) {
	const delay = 200 * time.Millisecond
	robots := "User-agent: *\nCrawl-delay: 0.2\n"
	newLimiter := func(r *sentRecorder) *politeness.Limiter {
		return politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: true, SendWithin: time.Minute, Scheduler: r})
	}
	check := func(t *testing.T, r *sentRecorder, n int, took time.Duration) {
		t.Helper()
		calls := r.calls()
		if len(calls) != n {
			t.Fatalf("Sent calls: got %d (%v), want %d", len(calls), calls, n)
		}
		for i, s := range calls {
			if !s {
				t.Errorf("Sent call %d: unsent, want sent", i)
			}
		}
		if took > time.Duration(n)*delay+5*time.Second {
			t.Errorf("%d requests took %v: held to a claim's lease", n, took)
		}
	}
	t.Run("plain", func(t *testing.T) {
		o := newPoliteOrigin(t, robots)
		r := newSentRecorder()
		h := newHarness(t, harnessOptions{policy: func(po *policy.Options) { po.Politeness = newLimiter(r).Politeness() }})
		clock := testkit.NewClockCheck()
		start := time.Now()
		for range 3 {
			if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
		}
		h.audit.WaitLines(t, 3)
		check(t, r, 3, time.Since(start))
		checkSpacing(t, o, r, delay, clock)
	})
	t.Run("intercepted", func(t *testing.T) {
		o := newTLSOrigin(t, serveRobots(robots))
		ca, err := mitm.NewCA(mitm.CAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := newSentRecorder()
		h := newHarness(t, harnessOptions{tls: originTLS(o), clientTLS: &tls.Config{RootCAs: ca.CertPool()},
			policy: func(po *policy.Options) { connectPorts(o)(po); po.Politeness = newLimiter(r).Politeness() },
			proxy:  func(po *proxy.Options) { po.Intercept = certs.TLSConfig }})
		start := time.Now()
		for range 3 {
			if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
		}
		h.audit.WaitLines(t, 4)           // and the CONNECT's
		check(t, r, 3, time.Since(start)) // the spacing: the plain case
	})
	t.Run("origin unreachable: the turn is given back unsent", func(t *testing.T) {
		o := newPoliteOrigin(t, robots)
		r := newSentRecorder()
		h := newHarness(t, harnessOptions{policy: func(po *policy.Options) { po.Politeness = newLimiter(r).Politeness() }})
		if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, want 200", resp.StatusCode)
		}
		o.Close() // robots.txt stays cached; the next request cannot connect
		if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d, want 502", resp.StatusCode)
		}
		h.audit.WaitLines(t, 2)
		if got := r.calls(); len(got) != 2 || !got[0] || got[1] {
			t.Errorf("Sent calls: got %v, want [true false]", got)
		}
	})
}
