package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
)

const (
	msgDown = "shared store unreachable: robots.txt fetching"
	msgUp   = "shared store reachable: robots.txt results and politeness state are shared again"
)

// TestOutageFallsBackAndResumes kills the store: fetches go to the origin
// and decide as before, the change is logged once and shown by the
// metric and Ready; once the store is back, sharing resumes (logged once).
func TestOutageFallsBackAndResumes(t *testing.T) {
	rs := startRedis(t)
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	r := newReplica(t, rs.URL(), nil)
	ctx := context.Background()
	rs.Kill()
	for i := range 5 {
		a := r.Fetch(ctx, "http", o.authority(), fetcher())
		if a.Result != policy.Successful || allowed(a, "Bot", "/private") || !allowed(a, "Bot", "/") {
			t.Fatalf("fetch %d with the store down: got %s, /private allowed %v; want successful, disallowed",
				i, a.Result, allowed(a, "Bot", "/private"))
		}
	}
	if n := o.fetches.Load(); n != 5 {
		t.Errorf("origin fetches with the store down: got %d, want 5 (each local)", n)
	}
	if got := r.log.count(msgDown); got != 1 {
		t.Errorf("log %q: got %d times, want once", msgDown, got)
	}
	if r.counter("up") != 0 || r.counter("fallbacks/robots") < 4 {
		t.Errorf("metrics: up %v, robots fallbacks %v; want 0, at least 4", r.counter("up"), r.counter("fallbacks/robots"))
	}
	time.Sleep(probeEvery)
	if ready, reason := r.Ready(); !ready || !strings.Contains(reason, "unreachable") {
		t.Errorf("Ready with the store down: got %v %q, want true and a reason", ready, reason)
	}

	rs.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ready, reason := r.Ready(); ready && reason == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Ready: still degraded 10s after the store came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.counter("up") != 1 || r.log.count(msgUp) != 1 || r.log.count(msgDown) != 1 {
		t.Errorf("after recovery: up %v, %q logged %d times, %q %d times; want 1, once, once",
			r.counter("up"), msgUp, r.log.count(msgUp), msgDown, r.log.count(msgDown))
	}
	other := newReplica(t, rs.URL(), nil)
	r.Fetch(ctx, "http", o.authority(), fetcher())
	other.Fetch(ctx, "http", o.authority(), fetcher())
	if n := o.fetches.Load(); n != 6 {
		t.Errorf("origin fetches after recovery: got %d, want 6 (one more, shared)", n)
	}
}

// TestOutageBackoff checks that a down store is tried once per backoff,
// not on every call.
func TestOutageBackoff(t *testing.T) {
	rs := startRedis(t)
	now := time.Unix(1e9, 0)
	r := newReplica(t, rs.URL(), func(o *Options) { o.Now = func() time.Time { return now } })
	rs.Kill()
	sched := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
	key := politeness.Key{Token: "Bot", Authority: "http://a.example:80"}
	ctx := context.Background()
	for range 10 {
		if _, err := sched.Pause(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.counter("errors/politeness"); got != 1 {
		t.Errorf("store attempts within the backoff: got %v errors, want 1", got)
	}
	now = now.Add(minRetry)
	for range 10 {
		_, _ = sched.Pause(ctx, key)
	}
	if got := r.counter("errors/politeness"); got != 2 {
		t.Errorf("store attempts after one backoff: got %v errors, want 2", got)
	}
	if got := r.counter("fallbacks/politeness"); got != 20 {
		t.Errorf("politeness fallbacks: got %v, want 20", got)
	}
}

// TestRefusedWritesStayUp: a store out of memory answers writes with an
// error; the replica fetches locally and decides correctly, and the store
// stays up (it answers: a reply is no outage).
func TestRefusedWritesStayUp(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	ctx := context.Background()
	for _, cmd := range [][]any{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if err := r.rdb.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	for range 3 {
		a := r.Fetch(ctx, "http", o.authority(), fetcher())
		if allowed(a, "Bot", "/private") || !allowed(a, "Bot", "/") {
			t.Fatalf("with writes refused: /private allowed %v, / allowed %v; want false, true", allowed(a, "Bot", "/private"), allowed(a, "Bot", "/"))
		}
	}
	if n := o.fetches.Load(); n != 3 {
		t.Errorf("origin fetches: got %d, want 3 (each local)", n)
	}
	if r.counter("up") != 1 || r.counter("errors/lock") != 3 || r.log.count(msgDown) != 0 {
		t.Errorf("up %v, lock errors %v, outage logged %d times; want 1, 3, 0", r.counter("up"), r.counter("errors/lock"), r.log.count(msgDown))
	}
	if got := r.log.count("shared store refused an operation"); got != 1 {
		t.Errorf("refusals logged %d times, want once", got)
	}
}
