package fleet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// near reports whether got is want within tolerance (the store's clock
// runs while the test does).
func near(got, want time.Duration) bool {
	const tolerance = 50 * time.Millisecond
	return got >= want-tolerance && got <= want+tolerance
}

// within reports whether got, a wait for a turn spaced want after a turn
// granted at most since ago, is what the spacing gives: no more than want,
// and no less than want less the time that has passed, as a busy machine
// may take long between the two turns (tolerance 50 ms for the clocks).
func within(got, want, since time.Duration) bool {
	const tolerance = 50 * time.Millisecond
	return got <= want+tolerance && got >= want-since-tolerance
}

// TestSchedulerSharedSpacing reserves slots of one key from two replicas:
// they are handed out one delay apart, first come first served, as one
// LocalScheduler would.
func TestSchedulerSharedSpacing(t *testing.T) {
	rs := startRedis(t)
	local := func() politeness.Scheduler { return politeness.NewLocalScheduler(politeness.LocalOptions{}) }
	a := newReplica(t, rs.URL(), nil).Scheduler(local(), SchedulerOptions{})
	b := newReplica(t, rs.URL(), nil).Scheduler(local(), SchedulerOptions{})
	key := politeness.Key{Token: "Bot", Authority: "http://spacing.example:80"}
	ctx := context.Background()
	tests := []struct {
		s           politeness.Scheduler
		maxWait     time.Duration
		wantWait    time.Duration
		wantGranted bool
		wantCause   politeness.Cause
	}{
		{a, time.Minute, 0, true, ""},
		{b, time.Minute, time.Second, true, politeness.CauseCrawlDelay},
		{a, time.Minute, 2 * time.Second, true, politeness.CauseCrawlDelay},
		{b, time.Second, 3 * time.Second, false, politeness.CauseCrawlDelay}, // too far: not recorded
		{b, time.Minute, 3 * time.Second, true, politeness.CauseCrawlDelay},
	}
	// The slots are one delay apart from the first; each wait counts from
	// its call, which a busy machine may make later than the first by
	// more than the tolerance: the wait is then shorter by that much.
	first := time.Now()
	for i, tc := range tests {
		got, err := tc.s.Reserve(ctx, key, time.Second, tc.maxWait)
		if err != nil {
			t.Fatal(err)
		}
		if got.Granted != tc.wantGranted || !within(got.Wait, tc.wantWait, time.Since(first)) || got.Cause != tc.wantCause {
			t.Errorf("Reserve %d: got %+v, want wait %v granted %v cause %q", i, got, tc.wantWait, tc.wantGranted, tc.wantCause)
		}
	}
	// Start: the first start is recorded; a second one from the other
	// replica must wait the delay.
	started := time.Now()
	if w, err := a.Start(ctx, key, time.Second, 0); err != nil || w.Wait != 0 {
		t.Errorf("Start on a: got %v %v, want 0", w, err)
	}
	if w, err := b.Start(ctx, key, time.Second, 0); err != nil || !within(w.Wait, time.Second, time.Since(started)) {
		t.Errorf("Start on b right after: got %v %v, want about 1s", w, err)
	}
}

func TestSchedulerSharedBackoff(t *testing.T) {
	rs := startRedis(t)
	local := politeness.NewLocalScheduler(politeness.LocalOptions{})
	o := SchedulerOptions{DefaultBackoff: 100 * time.Millisecond, MaxBackoff: 350 * time.Millisecond}
	a := newReplica(t, rs.URL(), nil).Scheduler(local, o)
	b := newReplica(t, rs.URL(), nil).Scheduler(local, o)
	key := politeness.Key{Token: "Bot", Authority: "http://backoff.example:80"}
	ctx := context.Background()
	steps := []struct {
		name string
		s    politeness.Scheduler
		b    politeness.Backoff
		want time.Duration
	}{
		{"first 429 without Retry-After", a, politeness.Backoff{}, 100 * time.Millisecond},
		{"second doubles", b, politeness.Backoff{}, 200 * time.Millisecond},
		{"third is capped", a, politeness.Backoff{}, 350 * time.Millisecond},
		{"Retry-After never shortens", b, politeness.Backoff{RetryAfter: time.Millisecond, HasRetryAfter: true}, 350 * time.Millisecond},
	}
	for _, st := range steps {
		got, err := st.s.Backoff(ctx, key, st.b)
		if err != nil || !near(got, st.want) {
			t.Errorf("%s: got %v %v, want about %v", st.name, got, err, st.want)
		}
	}
	if p, _ := b.Pause(ctx, key); !near(p, 350*time.Millisecond) {
		t.Errorf("Pause from the other replica: got %v, want about 350ms", p)
	}
	if s, _ := b.Reserve(ctx, key, 0, time.Minute); !s.Granted || s.Cause != politeness.CauseBackoff || !near(s.Wait, 350*time.Millisecond) {
		t.Errorf("Reserve in the pause: got %+v, want granted after about 350ms for backoff", s)
	}
	// Succeeded during the pause keeps it; after it, clears the streak.
	_ = a.Succeeded(ctx, key)
	if p, _ := a.Pause(ctx, key); p == 0 {
		t.Error("Succeeded during the pause cleared it")
	}
	time.Sleep(400 * time.Millisecond)
	_ = a.Succeeded(ctx, key)
	if got, _ := b.Backoff(ctx, key, politeness.Backoff{}); !near(got, 100*time.Millisecond) {
		t.Errorf("429 after a success: got %v, want about 100ms (the streak restarts)", got)
	}
}

// claimTimes is a replica's Scheduler (a Turnstile) that records, for
// each turn it claims, the wall-clock interval the claim happened in:
// just before the script was sent, and just after its answer came. The
// claim itself is on the store's clock (Redis TIME, the same wall clock
// on this machine), somewhere in that interval.
type claimTimes struct {
	politeness.Turnstile
	mu     *sync.Mutex
	claims *[]claim
}

// claim is when one turn was claimed: within [before, after].
type claim struct{ before, after time.Time }

func (c claimTimes) Turn(ctx context.Context, k politeness.Key, delay, maxWait, lease time.Duration, gate politeness.Gate) (politeness.Turn, error) {
	before := time.Now().Round(0)
	t, err := c.Turnstile.Turn(ctx, k, delay, maxWait, lease, gate)
	if err == nil && t.Started {
		c.record(before)
	}
	return t, err
}

func (c claimTimes) Start(ctx context.Context, k politeness.Key, delay, lease time.Duration) (politeness.Claim, error) {
	before := time.Now().Round(0)
	cl, err := c.Turnstile.Start(ctx, k, delay, lease)
	if err == nil && cl.Wait <= 0 {
		c.record(before)
	}
	return cl, err
}

func (c claimTimes) record(before time.Time) {
	after := time.Now().Round(0)
	c.mu.Lock()
	*c.claims = append(*c.claims, claim{before, after})
	c.mu.Unlock()
}

// TestSchedulerConcurrentStarts has 3 replicas start 6 requests of one key
// at once through the politeness.Limiter: their claims are a delay apart
// on the store's clock. Each claim is known to lie in an interval
// (claimTimes), so two claims can be as far apart as one interval's end
// is from the other's start, and that must be at least the delay, short
// by the store's microseconds at most (the clock is read to the
// microsecond, the delay passed in whole ones): no slack for how late a
// replica's goroutine runs, which only widens the intervals.
func TestSchedulerConcurrentStarts(t *testing.T) {
	rs := startRedis(t)
	const delay = 200 * time.Millisecond
	var mu sync.Mutex
	var claims []claim
	var wg sync.WaitGroup
	for range 3 {
		r := newReplica(t, rs.URL(), nil)
		sch := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
		l := politeness.New(politeness.Options{CrawlDelay: true, Scheduler: claimTimes{sch.(politeness.Turnstile), &mu, &claims}})
		for range 2 {
			wg.Go(func() {
				tk := l.Admit(context.Background(), politeness.Request{Key: politeness.Key{Token: "Bot", Authority: "http://c.example:80"},
					Delay: delay, HasDelay: true})
				defer tk.Release()
				if tk.Refused != "" {
					t.Errorf("refused: %s %v", tk.Refused, tk.Err)
				}
			})
		}
	}
	wg.Wait()
	if len(claims) != 6 {
		t.Fatalf("claims: got %d, want 6", len(claims))
	}
	least := time.Hour
	for i, a := range claims {
		for j, b := range claims[:i] {
			most := max(a.after.Sub(b.before), b.after.Sub(a.before))
			if least = min(least, most); most < delay-2*time.Microsecond {
				t.Errorf("claims %d and %d: at most %v apart, want at least %v", j, i, most, delay)
			}
		}
	}
	t.Logf("the closest two claims: at most %v apart (delay %v)", least, delay)
}

// TestSchedulerFallsBackWhenDown: with the store gone, the local
// scheduler spaces the replica's own requests.
func TestSchedulerFallsBackWhenDown(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	sc := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
	rs.Kill()
	key := politeness.Key{Token: "Bot", Authority: "http://down.example:80"}
	ctx := context.Background()
	first, err1 := sc.Reserve(ctx, key, time.Second, time.Minute)
	second, err2 := sc.Reserve(ctx, key, time.Second, time.Minute)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if first.Wait != 0 || !second.Granted || !near(second.Wait, time.Second) {
		t.Errorf("Reserve with the store down: got %+v then %+v, want 0 then about 1s (local spacing)", first, second)
	}
	if r.counter("up") != 0 {
		t.Error("robotsproxy_shared_up: got 1, want 0")
	}
}

func TestGateSharedLeases(t *testing.T) {
	rs := startRedis(t)
	ra := newReplica(t, rs.URL(), nil)
	ga := ra.Gate(2, politeness.NewLocalGate(2))
	gb := newReplica(t, rs.URL(), nil).Gate(2, politeness.NewLocalGate(2))
	ctx := context.Background()
	rel1, err1 := ga.Acquire(ctx, "http://g.example:80", false)
	rel2, err2 := gb.Acquire(ctx, "http://g.example:80", false)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if _, err := ga.Acquire(ctx, "http://g.example:80", false); !errors.Is(err, politeness.ErrBusy) {
		t.Errorf("third slot of 2 across replicas: got %v, want ErrBusy", err)
	}
	if rel, err := gb.Acquire(ctx, "http://other.example:80", false); err != nil {
		t.Errorf("another authority: got %v, want a slot", err)
	} else {
		rel()
	}
	time.AfterFunc(100*time.Millisecond, rel1)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	rel3, err := gb.Acquire(wctx, "http://g.example:80", true)
	if err != nil || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("waiting Acquire: got %v after %v, want a slot once the first is released", err, time.Since(start))
	}
	rel2()
	rel3()
	rel3() // twice does nothing
	// Both slots are free again: each Acquire takes one without waiting,
	// but a store round trip on a busy machine may take longer than the
	// short wait below, which only the third Acquire, with no slot left,
	// must run out of.
	free, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	for range 2 {
		rel, err := ga.Acquire(free, "http://g.example:80", true)
		if err != nil {
			t.Fatalf("after every release: %v", err)
		}
		defer rel()
	}
	short, cancel3 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel3()
	if _, err := ga.Acquire(short, "http://g.example:80", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the context: got %v, want the context's error (store up %v, politeness errors %v, fallbacks %v; log %s)",
			err, ra.counter("up"), ra.counter("errors/politeness"), ra.counter("fallbacks/politeness"), ra.log)
	}
}

// TestGateCallerGivesUp: a caller whose context ends before the store
// answers (a client gone, a short wait on a busy machine) gets its
// context's error, not a slot of the local fallback, and the store is not
// taken for down: the replica keeps sharing its politeness state.
func TestGateCallerGivesUp(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	g := r.Gate(1, politeness.NewLocalGate(1))
	rel, err := g.Acquire(context.Background(), "http://g.example:80", false) // the store is up
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Acquire(gone, "http://g.example:80", true); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with an ended context: got %v, want context.Canceled", err)
	}
	if r.counter("up") != 1 || r.counter("errors/politeness") != 0 || r.counter("fallbacks/politeness") != 0 {
		t.Errorf("after a caller gave up: up %v, politeness errors %v, fallbacks %v; want 1, 0, 0",
			r.counter("up"), r.counter("errors/politeness"), r.counter("fallbacks/politeness"))
	}
}

// TestSchedulerSharedClaims: a claim held on one replica holds the turn
// for the fleet until its Sent reaches the store; the next turn counts
// from the send, is free at once after a request never sent, and a Sent
// that comes after another claim is left alone. A claim of the local
// fallback goes back to it.
func TestSchedulerSharedClaims(t *testing.T) {
	rs := startRedis(t)
	ra, rb := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
	fallback := politeness.NewLocalScheduler(politeness.LocalOptions{})
	a := ra.Scheduler(fallback, SchedulerOptions{})
	b := rb.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
	key := politeness.Key{Token: "Bot", Authority: "http://claims.example:80"}
	ctx := context.Background()
	const delay, lease = time.Second, 10 * time.Second
	// start starts a turn on s; a wait counted from a send (from, a time
	// taken before it) may be shorter by the time that has passed since.
	startFrom := func(s politeness.Scheduler, wantWait time.Duration, from time.Time, wantHeld, wantClaim bool) uint64 {
		t.Helper()
		c, err := s.Start(ctx, key, delay, lease)
		ok := near(c.Wait, wantWait)
		if !from.IsZero() {
			ok = within(c.Wait, wantWait, time.Since(from))
		}
		if err != nil || !ok || c.Held != wantHeld || (c.ID != 0) != wantClaim {
			t.Fatalf("Start: got %+v, %v; want wait %v, held %v, claimed %v", c, err, wantWait, wantHeld, wantClaim)
		}
		return c.ID
	}
	start := func(s politeness.Scheduler, wantWait time.Duration, wantHeld, wantClaim bool) uint64 {
		t.Helper()
		return startFrom(s, wantWait, time.Time{}, wantHeld, wantClaim)
	}
	id := start(a, 0, false, true)
	if id&fleetClaim == 0 {
		t.Errorf("claim id %x: want the store's mark", id)
	}
	start(b, delay, true, false) // held by a's claim
	sentAt := time.Now()
	if err := a.Sent(ctx, key, id, delay, 300*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	waitFlushed(t, ra)
	startFrom(b, delay-300*time.Millisecond, sentAt, false, false) // the send was 300ms before the call
	time.Sleep(delay - 300*time.Millisecond)
	idB := start(b, 0, false, true)
	if err := b.Sent(ctx, key, idB, delay, 0, false); err != nil { // never sent
		t.Fatal(err)
	}
	waitFlushed(t, rb)
	idA := start(a, 0, false, true)
	if err := b.Sent(ctx, key, idB, delay, 0, true); err != nil { // an old claim: left alone
		t.Fatal(err)
	}
	waitFlushed(t, rb)
	start(b, delay, true, false)
	_ = a.Sent(ctx, key, idA, delay, 0, false)
	waitFlushed(t, ra)

	// A claim of the fallback is ended there.
	fid, err := fallback.Start(ctx, key, delay, lease)
	if err != nil || fid.ID == 0 {
		t.Fatalf("fallback Start: %+v, %v", fid, err)
	}
	if err := a.Sent(ctx, key, fid.ID, delay, 0, false); err != nil {
		t.Fatal(err)
	}
	if c, err := fallback.Start(ctx, key, delay, lease); err != nil || c.Wait != 0 {
		t.Errorf("fallback after its claim's Sent: got %+v, %v; want claimed", c, err)
	}
}

// TestSchedulerOrphanClaim: a claim the store made for a call that failed
// on the replica (its reply timed out) is ended off the path, so that the
// fleet does not wait for its lease.
func TestSchedulerOrphanClaim(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	sc := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{}).(*Scheduler)
	key := politeness.Key{Token: "Bot", Authority: "http://orphan.example:80"}
	ctx := context.Background()
	const delay, lease = time.Second, time.Minute
	id := newClaimID()
	// The store runs the claim; the replica never hears of it.
	if err := startScript.Run(ctx, r.rdb, []string{sc.paceKey(key)}, us(delay), us(sc.o.MaxBackoff), us(lease), claimArg(id)).Err(); err != nil {
		t.Fatal(err)
	}
	if c, err := sc.Start(ctx, key, delay, lease); err != nil || !c.Held {
		t.Fatalf("Start while the orphan is held: got %+v, %v; want held", c, err)
	}
	sc.orphan(key, id, delay, lease)
	waitFlushed(t, r)
	if c, err := sc.Start(ctx, key, delay, lease); err != nil || c.Wait != 0 {
		t.Errorf("Start after the orphan was ended: got %+v, %v; want claimed", c, err)
	}
}
