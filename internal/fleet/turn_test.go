package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// onPath marks the context of a request's calls.
type onPath struct{}

// countHook counts what a client sends, one round trip per command sent
// alone and per pipeline: on a request's path (its context carries
// onPath) and off it.
type countHook struct {
	mu            sync.Mutex
	on, off       int
	names         []string // the commands counted on the path
	pipelinedCmds int      // the commands of the pipelines off the path
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		if ctx.Value(onPath{}) != nil {
			h.on++
			h.names = append(h.names, cmd.Name())
		} else {
			h.off++
		}
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		if ctx.Value(onPath{}) != nil {
			h.on++
			h.names = append(h.names, "pipeline")
		} else {
			h.off++
			h.pipelinedCmds += len(cmds)
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// take returns the counts since the last call.
func (h *countHook) take() (on int, names []string, off, pipelined int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	on, names, off, pipelined = h.on, h.names, h.off, h.pipelinedCmds
	h.on, h.off, h.names, h.pipelinedCmds = 0, 0, nil, 0
	return on, names, off, pipelined
}

// TestTurnOneRoundTrip: an allowed request with crawl delay counted from
// the send, back-off and the in-flight cap on costs one round trip to the
// store before it goes ahead, and none after its send or its response:
// the end of its claim, the success that clears an ended back-off and its
// release go in one script, in a pipeline off its path.
func TestTurnOneRoundTrip(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	hook := &countHook{}
	r.rdb.AddHook(hook)
	sched := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{})
	gate := r.Gate(2, politeness.NewLocalGate(2))
	lim := politeness.New(politeness.Options{CrawlDelay: true, DefaultDelay: time.Second, Backoff: true,
		MaxConcurrentPerHost: 2, Scheduler: sched, Gate: gate, CountFromSend: true})
	ctx := context.WithValue(context.Background(), onPath{}, true)
	admit := func(i int) *politeness.Ticket {
		tk := lim.Admit(ctx, politeness.Request{Key: politeness.Key{Token: fmt.Sprintf("bot%d", i),
			Authority: fmt.Sprintf("http://site%d.example:80", i)}})
		if tk.Refused != "" || tk.Waited != 0 || !tk.Paced() {
			t.Fatalf("request %d: refused %q, waited %v, paced %v; want it to go ahead at once, paced", i, tk.Refused, tk.Waited, tk.Paced())
		}
		if err := tk.Sending(); err != nil {
			t.Fatalf("request %d: Sending: %v", i, err)
		}
		tk.Wrote()
		return tk
	}
	// The first request loads the script (NOSCRIPT, then EVAL).
	first := admit(-1)
	_ = lim.Observe(ctx, first, 200, "", "")
	first.Release()
	waitFlushed(t, r)
	hook.take()

	const n = 20
	var offTotal, pipelinedTotal int
	for i := range n {
		tk := admit(i)
		got, names, off, pipelined := hook.take()
		offTotal, pipelinedTotal = offTotal+off, pipelinedTotal+pipelined
		if got != 1 {
			t.Errorf("request %d: %d round trips before it goes ahead (%v), want 1", i, got, names)
		}
		if err := lim.Observe(ctx, tk, 200, "", ""); err != nil {
			t.Fatal(err)
		}
		tk.Release()
		got, names, off, pipelined = hook.take()
		offTotal, pipelinedTotal = offTotal+off, pipelinedTotal+pipelined
		if got != 0 {
			t.Errorf("request %d: %d round trips on its response's path (%v), want 0", i, got, names)
		}
	}
	waitFlushed(t, r)
	on, names, off, pipelined := hook.take()
	off, pipelined = off+offTotal, pipelined+pipelinedTotal
	// A request's claim end, success and release are one script, sent
	// with the others of its batch, at most one round trip a request; on a
	// busy machine the flusher may fire between the writes of one request
	// now and then, so a few more scripts are allowed.
	const slack = 3
	if on != 0 || pipelined < n || pipelined > n+slack || off > n+slack {
		t.Errorf("after the responses: %d round trips on a path (%v), %d off it with %d commands pipelined; want 0 on, at most %d off with %d to %d commands (one script a request)",
			on, names, off, pipelined, n+slack, n, n+slack)
	}
	for i := range n {
		key := politeness.Key{Token: fmt.Sprintf("bot%d", i), Authority: fmt.Sprintf("http://site%d.example:80", i)}
		if c, err := sched.Start(ctx, key, time.Second, 0); err != nil || c.Held {
			t.Errorf("bot%d: Start after the send: %+v, %v; want the claim ended", i, c, err)
		}
	}
	for i := range n {
		if c := r.rdb.ZCard(ctx, r.gateKey(fmt.Sprintf("http://site%d.example:80", i))).Val(); c != 0 {
			t.Errorf("site%d: %d leases held after every release, want 0", i, c)
		}
	}
}

// waitFlushed waits until the writes queued off the requests' path are
// answered.
func waitFlushed(t *testing.T, r *replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.flushLater(ctx); err != nil {
		t.Fatalf("the writes off the path were not answered within 5s: %v", err)
	}
}

// TestTurnSharedSpacingAndCap: a turn is what Reserve, Acquire and Start
// are, across replicas: the next start of a key is a crawl delay later,
// a full gate takes no slot and records no start, and a key in back-off
// waits for the pause.
func TestTurnSharedSpacingAndCap(t *testing.T) {
	rs := startRedis(t)
	local := func() politeness.Scheduler { return politeness.NewLocalScheduler(politeness.LocalOptions{}) }
	ra, rb := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
	a, b := ra.Scheduler(local(), SchedulerOptions{}).(*Scheduler), rb.Scheduler(local(), SchedulerOptions{}).(*Scheduler)
	ga, gb := ra.Gate(1, politeness.NewLocalGate(1)), rb.Gate(1, politeness.NewLocalGate(1))
	ctx := context.Background()
	const auth = "http://turn.example:80"
	k1, k2 := politeness.Key{Token: "one", Authority: auth}, politeness.Key{Token: "two", Authority: auth}

	t1, err := a.Turn(ctx, k1, time.Second, time.Minute, 0, ga)
	if err != nil || !t1.Granted || t1.Wait != 0 || !t1.Started || t1.Release == nil {
		t.Fatalf("first turn: got %+v, %v; want granted, started, with a slot", t1, err)
	}
	// Same key on the other replica: its slot is a delay later; no slot
	// taken, no start recorded.
	t2, err := b.Turn(ctx, k1, time.Second, time.Minute, 0, gb)
	if err != nil || !t2.Granted || !near(t2.Wait, time.Second) || t2.Cause != politeness.CauseCrawlDelay || t2.Started || t2.Release != nil {
		t.Errorf("same key on b: got %+v, %v; want granted after about 1s (crawl-delay), not started, no slot", t2, err)
	}
	// Another token, same authority: no wait, but the one slot is held.
	t3, err := b.Turn(ctx, k2, time.Second, time.Minute, 0, gb)
	if err != nil || !t3.Granted || t3.Wait != 0 || t3.Started || t3.Release != nil {
		t.Errorf("full gate: got %+v, %v; want granted now, not started, no slot", t3, err)
	}
	// The recorded start holds for Start too.
	if w, err := b.Start(ctx, k1, time.Second, 0); err != nil || !near(w.Wait, time.Second) {
		t.Errorf("Start after the turn: got %v %v, want about 1s", w, err)
	}
	t1.Release()
	waitFlushed(t, ra)
	if rel, err := gb.Acquire(ctx, auth, false); err != nil {
		t.Errorf("after the release: got %v, want the slot", err)
	} else {
		rel()
	}
	// Back-off: a paused key waits for the pause; too far is refused and
	// records nothing.
	k3 := politeness.Key{Token: "three", Authority: auth}
	if _, err := a.Backoff(ctx, k3, politeness.Backoff{RetryAfter: 5 * time.Second, HasRetryAfter: true}); err != nil {
		t.Fatal(err)
	}
	t4, err := b.Turn(ctx, k3, 0, time.Second, 0, nil)
	if err != nil || t4.Granted || !near(t4.Wait, 5*time.Second) || t4.Cause != politeness.CauseBackoff {
		t.Errorf("paused key: got %+v, %v; want refused, about 5s, backoff", t4, err)
	}
	// A gate that is not the store's own: the Limiter makes separate calls.
	if _, err := a.Turn(ctx, k1, 0, time.Minute, 0, politeness.NewLocalGate(1)); err != politeness.ErrNoTurn {
		t.Errorf("a local gate: got %v, want ErrNoTurn", err)
	}
}

// TestTurnStoreDown: with the store unreachable a turn is
// politeness.ErrNoTurn (the separate calls fall back), and SucceededLater
// goes to the local scheduler.
func TestTurnStoreDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := newReplica(t, "redis://"+addr, func(o *Options) { o.Timeout = 100 * time.Millisecond })
	sc := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{}).(*Scheduler)
	key := politeness.Key{Token: "bot", Authority: "http://down.example:80"}
	if _, err := sc.Turn(context.Background(), key, time.Second, time.Minute, 0, nil); err != politeness.ErrNoTurn {
		t.Errorf("store down: got %v, want ErrNoTurn", err)
	}
	sc.SucceededLater(key) // must not block nor queue
	if n := len(r.later.ops); n != 0 {
		t.Errorf("store down: %d writes queued, want 0", n)
	}
}

// TestCloseSendsQueuedReleases: a release queued off the path when the
// store closes is sent before the connections close; Close twice is fine.
func TestCloseSendsQueuedReleases(t *testing.T) {
	rs := startRedis(t)
	a, b := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
	ctx := context.Background()
	const auth = "http://close.example:80"
	var rels []func()
	for range 50 {
		rel, err := a.Gate(50, politeness.NewLocalGate(50)).Acquire(ctx, auth, false)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	for _, rel := range rels {
		rel()
	}
	if err := errors.Join(a.Close(), a.Close()); err != nil {
		t.Fatal(err)
	}
	if n := b.rdb.ZCard(ctx, b.gateKey(auth)).Val(); n != 0 {
		t.Errorf("leases held after release and Close: %d, want 0", n)
	}
}

// TestReleaseWithHostileRecord: a request's release goes in the script
// that ends its claim; a politeness record that script refuses (a field
// out of range) does not keep the lease, which is removed first.
func TestReleaseWithHostileRecord(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	sc := r.Scheduler(politeness.NewLocalScheduler(politeness.LocalOptions{}), SchedulerOptions{}).(*Scheduler)
	g := r.Gate(1, politeness.NewLocalGate(1))
	ctx := context.Background()
	key := politeness.Key{Token: "bot", Authority: "http://hostile-release.example:80"}
	turn, err := sc.Turn(ctx, key, time.Second, time.Minute, 30*time.Second, g)
	if err != nil || !turn.Started || turn.ID == 0 || turn.Release == nil {
		t.Fatalf("turn: %+v, %v; want started, with a claim and a slot", turn, err)
	}
	if err := r.rdb.HSet(ctx, sc.paceKey(key), "k", "garbage").Err(); err != nil {
		t.Fatal(err)
	}
	if err := sc.Sent(ctx, key, turn.ID, time.Second, 0, true); err != nil {
		t.Fatal(err)
	}
	sc.SucceededLater(key)
	turn.Release()
	waitFlushed(t, r)
	if n := r.rdb.ZCard(ctx, r.gateKey(key.Authority)).Val(); n != 0 {
		t.Errorf("leases held after the release: %d, want 0", n)
	}
	if n := r.counter("errors/politeness"); n != 1 {
		t.Errorf("politeness errors: %v, want 1 (the refused record)", n)
	}
}
