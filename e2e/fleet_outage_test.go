package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/redistest"
)

// fleetOutage runs requests through the 3 replicas for 4s over 4
// origins whose robots.txt disallows /private (the 2s TTL makes the
// replicas refetch during the run); redis-server is killed at 1s and
// started again at 2.5s. Every request must be answered and decided
// correctly (no 5xx); /readyz says "degraded" (200) while it is down and
// "ready" once it is back; then sharing resumes: a new authority is
// fetched once for the fleet.
func fleetOutage(t *testing.T, f *fleet, rs *redistest.Server) {
	var origins []*fleetOrigin
	for range 4 {
		origins = append(origins, newFleetOrigin(t, "User-agent: *\nDisallow: /private\n"))
	}
	var sent, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := origins[(w+i)%len(origins)]
				path := fmt.Sprintf("/public/%d/%d", w, i)
				if i%2 == 1 {
					path = fmt.Sprintf("/private/%d/%d", w, i)
				}
				status, err := f.get(w+i, o.srv.URL+path)
				sent.Add(1)
				if status != wantPrivate(path) {
					failed.Add(1)
					t.Errorf("replica %d: %s: got %d (%v), want %d", (w+i)%3, path, status, err, wantPrivate(path))
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)
	rs.Kill()
	time.Sleep(700 * time.Millisecond)
	for i := range f.procs {
		if code, body := f.readyz(t, i); code != http.StatusOK || !strings.HasPrefix(body, "degraded: shared:") {
			t.Errorf("replica %d: /readyz with redis down: got %d %q, want 200 \"degraded: shared: ...\"", i, code, body)
		}
	}
	if up := f.sum(t, "robotsproxy_shared_up"); up != 0 {
		t.Errorf("robotsproxy_shared_up with redis down: got %v over the fleet, want 0", up)
	}
	time.Sleep(800 * time.Millisecond)
	rs.Restart()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if sent.Load() < 100 || failed.Load() > 0 {
		t.Errorf("requests during the outage run: %d sent, %d wrong; want at least 100 sent, none wrong", sent.Load(), failed.Load())
	}
	if fb := f.sum(t, `robotsproxy_shared_fallbacks_total{what="robots"}`); fb == 0 {
		t.Error("robots.txt fallbacks over the fleet: got 0, want some (fetched locally while redis was down)")
	}
	waitReady(t, f)
	if up := f.sum(t, "robotsproxy_shared_up"); up != 3 {
		t.Errorf("robotsproxy_shared_up after redis came back: got %v over the fleet, want 3", up)
	}
	for i, p := range f.procs {
		if n := strings.Count(p.stderr.String(), "shared store unreachable: robots.txt fetching"); n != 1 {
			t.Errorf("replica %d: the outage was logged %d times, want once", i, n)
		}
		if n := strings.Count(p.stderr.String(), "shared store reachable: robots.txt results and politeness state are shared again"); n != 1 {
			t.Errorf("replica %d: the recovery was logged %d times, want once", i, n)
		}
	}
	resumed := newFleetOrigin(t, "User-agent: *\nDisallow: /private\n")
	resumed.mu.Lock() // the origin is serving: its handler reads the fields under mu
	resumed.delay = 200 * time.Millisecond
	resumed.mu.Unlock()
	var burst sync.WaitGroup
	for i := range 30 {
		burst.Go(func() {
			path := fmt.Sprintf("/private/%d", i)
			if status, err := f.get(i, resumed.srv.URL+path); status != http.StatusForbidden {
				t.Errorf("after recovery: replica %d: %s: got %d (%v), want 403", i%3, path, status, err)
			}
		})
	}
	burst.Wait()
	if got := resumed.fetches.Load(); got != 1 {
		t.Errorf("after recovery: robots.txt fetches of a new authority: got %d, want 1 (sharing resumed)", got)
	}
}

// waitReady waits until every replica's /readyz says "ready".
func waitReady(t *testing.T, f *fleet) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := range f.procs {
		for {
			code, body := f.readyz(t, i)
			if code == http.StatusOK && body == "ready" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d: /readyz still %d %q 15s after redis came back", i, code, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
