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
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// sentRecorder is a LocalScheduler that records the claims ended by Sent.
type sentRecorder struct {
	*politeness.LocalScheduler
	mu   sync.Mutex
	sent []bool // each Sent's sent argument
}

func (r *sentRecorder) Sent(ctx context.Context, k politeness.Key, id uint64, delay, ago time.Duration, sent bool) error {
	r.mu.Lock()
	r.sent = append(r.sent, sent)
	r.mu.Unlock()
	return r.LocalScheduler.Sent(ctx, k, id, delay, ago, sent)
}

func (r *sentRecorder) calls() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.sent...)
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
	check := func(t *testing.T, r *sentRecorder, n int, took time.Duration, gaps []time.Duration) {
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
		for i, g := range gaps {
			if g < delay {
				t.Errorf("gap %d at the origin: %v, want at least %v", i, g, delay)
			}
		}
	}
	t.Run("plain", func(t *testing.T) {
		o := newPoliteOrigin(t, robots)
		r := &sentRecorder{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{})}
		h := newHarness(t, harnessOptions{policy: func(po *policy.Options) { po.Politeness = newLimiter(r).Politeness() }})
		start := time.Now()
		for range 3 {
			if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
		}
		h.audit.WaitLines(t, 3)
		check(t, r, 3, time.Since(start), o.gaps())
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
		r := &sentRecorder{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{})}
		h := newHarness(t, harnessOptions{tls: originTLS(o), clientTLS: &tls.Config{RootCAs: ca.CertPool()},
			policy: func(po *policy.Options) { connectPorts(o)(po); po.Politeness = newLimiter(r).Politeness() },
			proxy:  func(po *proxy.Options) { po.Intercept = certs.TLSConfig }})
		start := time.Now()
		for range 3 {
			if resp, _ := h.do(t, "GET", o.URL+"/page", "Bot/1.0", ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
		}
		h.audit.WaitLines(t, 4)                // and the CONNECT's
		check(t, r, 3, time.Since(start), nil) // the spacing: the plain case
	})
	t.Run("origin unreachable: the turn is given back unsent", func(t *testing.T) {
		o := newPoliteOrigin(t, robots)
		r := &sentRecorder{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{})}
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
