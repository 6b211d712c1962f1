package politeness_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	waited   map[politeness.Cause][]time.Duration
	rejected map[politeness.Cause]int
}

func newRecorder() *recorder {
	return &recorder{waited: map[politeness.Cause][]time.Duration{}, rejected: map[politeness.Cause]int{}}
}

func (r *recorder) Waited(c politeness.Cause, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waited[c] = append(r.waited[c], d)
}

func (r *recorder) Rejected(c politeness.Cause) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected[c]++
}

// fakeLimiter is a Limiter on a fake clock whose Sleep advances it.
func fakeLimiter(clk *fakeClock, o politeness.Options) *politeness.Limiter {
	o.Now, o.Sleep = clk.Now, clk.Sleep
	if o.Scheduler == nil {
		o.Scheduler = politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
	}
	return politeness.New(o)
}

func TestLimiterDelay(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		o    politeness.Options
		req  politeness.Request
		want time.Duration
	}{
		{"ignored", politeness.Options{}, politeness.Request{Delay: 2 * s, HasDelay: true}, 0},
		{"from robots.txt", politeness.Options{CrawlDelay: true}, politeness.Request{Delay: 2 * s, HasDelay: true}, 2 * s},
		{"fractional", politeness.Options{CrawlDelay: true}, politeness.Request{Delay: s / 2, HasDelay: true}, s / 2},
		{"capped by default", politeness.Options{CrawlDelay: true}, politeness.Request{Delay: time.Hour, HasDelay: true}, 30 * s},
		{"capped", politeness.Options{CrawlDelay: true, MaxCrawlDelay: 5 * s}, politeness.Request{Delay: 9 * s, HasDelay: true}, 5 * s},
		{"robots.txt says nothing", politeness.Options{CrawlDelay: true, DefaultDelay: 3 * s}, politeness.Request{}, 3 * s},
		{"robots.txt says 0", politeness.Options{CrawlDelay: true, DefaultDelay: 3 * s}, politeness.Request{HasDelay: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			l := fakeLimiter(clk, tt.o)
			tt.req.Key = keyA
			first := l.Admit(context.Background(), tt.req)
			second := l.Admit(context.Background(), tt.req)
			if first.Delay != tt.want || first.Waited != 0 || second.Waited != tt.want {
				t.Errorf("Delay %v, waits %v then %v; want delay %v, waits 0 then %v", first.Delay, first.Waited, second.Waited, tt.want, tt.want)
			}
		})
	}
}

func TestLimiterQueuesFirstComeFirstServed(t *testing.T) {
	clk := newFakeClock()
	l := politeness.New(politeness.Options{CrawlDelay: true, Now: clk.Now, Sleep: clk.Block,
		Scheduler: politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})})
	const n = 5
	admitted := make(chan int, n)
	for i := range n {
		go func() {
			if tk := l.Admit(context.Background(), politeness.Request{Key: keyA, Delay: time.Second, HasDelay: true}); tk.Refused != "" {
				t.Errorf("request %d refused: %+v", i, tk)
			}
			admitted <- i
		}()
		// Request i has its slot (it is admitted, or sleeping) before i+1 comes.
		for len(admitted)+clk.Sleeping() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range n {
		if got := <-admitted; got != i {
			t.Fatalf("admitted %d-th: request %d, want %d (first come, first served)", i, got, i)
		}
		if i < n-1 {
			clk.Advance(time.Second)
		}
	}
}

func TestLimiterOnEarly(t *testing.T) {
	req := politeness.Request{Key: keyA, Delay: 2 * time.Second, HasDelay: true}
	tests := []struct {
		name      string
		o         politeness.Options
		n         int // requests at the same instant
		wantCause politeness.Cause
		wantRetry time.Duration
	}{
		{"wait holds it", politeness.Options{CrawlDelay: true}, 2, "", 0},
		{"wait past max_wait refuses", politeness.Options{CrawlDelay: true, MaxWait: time.Second}, 2, politeness.CauseCrawlDelay, 2 * time.Second},
		{"reject refuses at once", politeness.Options{CrawlDelay: true, Reject: true}, 2, politeness.CauseCrawlDelay, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			rec := newRecorder()
			tt.o.Observer = rec
			o := tt.o
			o.Now = clk.Now
			o.Scheduler = politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
			o.Sleep = clk.Sleep
			l := politeness.New(o)
			var last *politeness.Ticket
			for range tt.n {
				last = l.Admit(context.Background(), req)
			}
			if last.Refused != tt.wantCause || last.RetryAfter != tt.wantRetry {
				t.Errorf("last request: refused %q, Retry-After %v; want %q, %v", last.Refused, last.RetryAfter, tt.wantCause, tt.wantRetry)
			}
			if tt.wantCause != "" && rec.rejected[tt.wantCause] != 1 {
				t.Errorf("Observer.Rejected: got %v, want one %s", rec.rejected, tt.wantCause)
			}
		})
	}
}

func TestLimiterBackoff(t *testing.T) {
	clk := newFakeClock()
	rec := newRecorder()
	l := fakeLimiter(clk, politeness.Options{Backoff: true, Observer: rec})
	ctx := context.Background()
	admit := func(wantWait time.Duration, wantCause politeness.Cause) *politeness.Ticket {
		t.Helper()
		tk := l.Admit(ctx, politeness.Request{Key: keyA})
		if tk.Refused != "" || tk.Waited != wantWait || tk.WaitCause != wantCause {
			t.Fatalf("Admit: refused %q, waited %v for %q; want waited %v for %q", tk.Refused, tk.Waited, tk.WaitCause, wantWait, wantCause)
		}
		return tk
	}
	observe := func(tk *politeness.Ticket, status int, retryAfter string, wantPause time.Duration) {
		t.Helper()
		if err := l.Observe(ctx, tk, status, retryAfter, ""); err != nil || tk.Backoff != wantPause {
			t.Fatalf("Observe(%d, Retry-After %q): pause %v, %v; want %v", status, retryAfter, tk.Backoff, err, wantPause)
		}
	}
	tk := admit(0, "")
	observe(tk, 503, "", 0) // 503 without Retry-After: no back-off
	observe(admit(0, ""), 200, "", 0)
	observe(admit(0, ""), 429, "", politeness.DefaultBackoffPause)
	tk = admit(politeness.DefaultBackoffPause, politeness.CauseBackoff)
	observe(tk, 429, "", 2*politeness.DefaultBackoffPause) // doubled
	tk = admit(2*politeness.DefaultBackoffPause, politeness.CauseBackoff)
	observe(tk, 200, "", 0) // the first success after the pause clears it
	observe(admit(0, ""), 503, "7", 7*time.Second)
	tk = admit(7*time.Second, politeness.CauseBackoff)
	observe(tk, 429, clk.Now().Add(9*time.Second).UTC().Format(http.TimeFormat), 9*time.Second) // HTTP-date
	if got := rec.waited[politeness.CauseBackoff]; len(got) != 3 {
		t.Errorf("Observer.Waited(backoff): got %v, want 3 waits", got)
	}
}

func TestLimiterBackoffWhileWaiting(t *testing.T) {
	clk := newFakeClock()
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
	first := true
	l := politeness.New(politeness.Options{CrawlDelay: true, Backoff: true, Scheduler: sch, Now: clk.Now,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if first { // an answer in flight pauses the key while this request waits
				first = false
				if _, err := sch.Backoff(ctx, keyA, politeness.Backoff{RetryAfter: 10 * time.Second, HasRetryAfter: true}); err != nil {
					return err
				}
			}
			clk.Advance(d)
			return nil
		}})
	req := politeness.Request{Key: keyA, Delay: time.Second, HasDelay: true}
	l.Admit(context.Background(), req)
	tk := l.Admit(context.Background(), req)
	if tk.Refused != "" || tk.Waited != 10*time.Second || tk.WaitCause != politeness.CauseBackoff {
		t.Errorf("refused %q, waited %v for %q; want waited 10s (1s, then the rest of the pause) for backoff", tk.Refused, tk.Waited, tk.WaitCause)
	}
}

func TestLimiterGivesUpWithTheClient(t *testing.T) {
	l := politeness.New(politeness.Options{CrawlDelay: true})
	req := politeness.Request{Key: keyA, Delay: 10 * time.Second, HasDelay: true}
	l.Admit(context.Background(), req)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	tk := l.Admit(ctx, req)
	if tk.Refused != politeness.CauseCrawlDelay || !errors.Is(tk.Err, context.DeadlineExceeded) {
		t.Errorf("refused %q, err %v; want crawl-delay with the context's error", tk.Refused, tk.Err)
	}
}

// startRecorder is a LocalScheduler on the real clock that keeps the time
// of every start it records: the time it checked the spacing against.
type startRecorder struct {
	*politeness.LocalScheduler
	mu     sync.Mutex
	now    time.Time // the scheduler's last reading of the clock
	starts []time.Time
}

func newStartRecorder() *startRecorder {
	r := &startRecorder{}
	r.LocalScheduler = politeness.NewLocalScheduler(politeness.LocalOptions{Now: func() time.Time {
		r.now = time.Now() // under r.mu: every call below holds it
		return r.now
	}})
	return r
}

func (r *startRecorder) Reserve(ctx context.Context, k politeness.Key, delay, maxWait time.Duration) (politeness.Slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.LocalScheduler.Reserve(ctx, k, delay, maxWait)
}

func (r *startRecorder) Start(ctx context.Context, k politeness.Key, delay, lease time.Duration) (politeness.Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.LocalScheduler.Start(ctx, k, delay, lease)
	if err == nil && c.Wait == 0 {
		r.starts = append(r.starts, r.now)
	}
	return c, err
}

// TestLimiterSpacingRealTime runs concurrent requests on the real clock:
// the starts recorded are at least the delay apart, however late the
// goroutines wake.
func TestLimiterSpacingRealTime(t *testing.T) {
	const delay, n = 30 * time.Millisecond, 8
	sch := newStartRecorder()
	l := politeness.New(politeness.Options{CrawlDelay: true, Scheduler: sch})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if tk := l.Admit(context.Background(), politeness.Request{Key: keyA, Delay: delay, HasDelay: true}); tk.Refused != "" {
				t.Errorf("refused: %+v", tk)
			}
		})
	}
	wg.Wait()
	if len(sch.starts) != n {
		t.Fatalf("starts recorded: got %d, want %d", len(sch.starts), n)
	}
	least := time.Hour
	for i := 1; i < n; i++ {
		if gap := sch.starts[i].Sub(sch.starts[i-1]); gap < delay {
			t.Errorf("starts %d and %d: %v apart, want at least %v", i-1, i, gap, delay)
		} else {
			least = min(least, gap)
		}
	}
	t.Logf("starts at least %v apart (delay %v)", least, delay)
}

// callCounter is a LocalScheduler that counts the calls made to it, the
// round trips a shared store would serve.
type callCounter struct {
	*politeness.LocalScheduler
	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[method]++
}

func (c *callCounter) Reserve(ctx context.Context, k politeness.Key, delay, maxWait time.Duration) (politeness.Slot, error) {
	c.count("Reserve")
	return c.LocalScheduler.Reserve(ctx, k, delay, maxWait)
}

func (c *callCounter) Start(ctx context.Context, k politeness.Key, delay, lease time.Duration) (politeness.Claim, error) {
	c.count("Start")
	return c.LocalScheduler.Start(ctx, k, delay, lease)
}

func (c *callCounter) Pause(ctx context.Context, k politeness.Key) (time.Duration, error) {
	c.count("Pause")
	return c.LocalScheduler.Pause(ctx, k)
}

// reset forgets the calls counted.
func (c *callCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = map[string]int{}
}

// releasingGate is a LocalGate that runs release before a request queues
// for a slot: the request waits, but not for long.
type releasingGate struct {
	*politeness.LocalGate
	release func()
}

func (g *releasingGate) Acquire(ctx context.Context, authority string, wait bool) (func(), error) {
	if wait {
		g.release()
	}
	return g.LocalGate.Acquire(ctx, authority, wait)
}

// TestLimiterSchedulerCalls counts the Scheduler calls of the first or
// the second of two requests at the same instant: a request that is not
// held reads no pause (Reserve has just said there is none); one that
// waited, for its slot or for the in-flight cap, reads it again.
func TestLimiterSchedulerCalls(t *testing.T) {
	tests := []struct {
		name  string
		o     politeness.Options
		delay time.Duration
		nth   int // the request counted, 1 or 2
		want  map[string]int
	}{
		{"back-off only", politeness.Options{Backoff: true}, 0, 2, map[string]int{"Reserve": 1}},
		{"crawl delay, no wait", politeness.Options{Backoff: true, CrawlDelay: true}, 20 * time.Millisecond, 1, map[string]int{"Reserve": 1, "Start": 1}},
		{"crawl delay, after a wait", politeness.Options{Backoff: true, CrawlDelay: true}, 20 * time.Millisecond, 2, map[string]int{"Reserve": 1, "Pause": 1, "Start": 1}},
		{"in-flight cap, no wait", politeness.Options{Backoff: true, MaxConcurrentPerHost: 1}, 0, 1, map[string]int{"Reserve": 1}},
		{"in-flight cap, after a wait", politeness.Options{Backoff: true, MaxConcurrentPerHost: 1}, 0, 2, map[string]int{"Reserve": 1, "Pause": 1}},
		{"crawl delay without back-off", politeness.Options{CrawlDelay: true}, 20 * time.Millisecond, 2, map[string]int{"Reserve": 1, "Start": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &callCounter{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{}), calls: map[string]int{}}
			tt.o.Scheduler = c
			var first *politeness.Ticket
			if tt.o.MaxConcurrentPerHost > 0 {
				tt.o.Gate = &releasingGate{politeness.NewLocalGate(1), func() { first.Release() }}
			}
			l := politeness.New(tt.o) // on the real clock: the in-flight wait has a real deadline
			req := politeness.Request{Key: keyA, Delay: tt.delay, HasDelay: true}
			for i := 1; i <= tt.nth; i++ {
				c.reset()
				tk := l.Admit(context.Background(), req)
				if tk.Refused != "" {
					t.Fatalf("request %d refused: %+v", i, tk)
				}
				if first == nil {
					first = tk
				}
			}
			if got := fmt.Sprint(c.calls); got != fmt.Sprint(tt.want) {
				t.Errorf("calls of request %d: got %v, want %v", tt.nth, got, tt.want)
			}
		})
	}
}

// turnCounter is a callCounter that is a Turnstile, made of its
// LocalScheduler's calls (the reference of what a Turn does); with noTurn
// it answers ErrNoTurn.
type turnCounter struct {
	*callCounter
	noTurn bool
}

func (c *turnCounter) Turn(ctx context.Context, k politeness.Key, delay, maxWait, lease time.Duration, gate politeness.Gate) (politeness.Turn, error) {
	c.count("Turn")
	if c.noTurn {
		return politeness.Turn{}, politeness.ErrNoTurn
	}
	slot, err := c.LocalScheduler.Reserve(ctx, k, delay, maxWait)
	if err != nil || !slot.Granted || slot.Wait > 0 {
		return politeness.Turn{Slot: slot}, err
	}
	t := politeness.Turn{Slot: slot}
	if gate != nil {
		if t.Release, err = gate.Acquire(ctx, k.Authority, false); err != nil {
			return politeness.Turn{Slot: slot}, nil
		}
	}
	if delay <= 0 {
		t.Started = true
		return t, nil
	}
	cl, err := c.LocalScheduler.Start(ctx, k, delay, lease)
	t.Started, t.ID = err == nil && cl.Wait == 0, cl.ID
	return t, err
}

func (c *turnCounter) SucceededLater(k politeness.Key) {
	c.count("SucceededLater")
	_ = c.LocalScheduler.Succeeded(context.Background(), k)
}

// TestLimiterTurnstile: with a Turnstile, a request that may start at
// once costs one call (one round trip to a shared store), its success
// goes off its path; one that waits, or a Turnstile that cannot answer,
// makes the separate calls; the spacing is the same.
func TestLimiterTurnstile(t *testing.T) {
	tests := []struct {
		name   string
		o      politeness.Options
		noTurn bool
		nth    int // the request counted, 1 or 2
		want   map[string]int
	}{
		{"delay, back-off and cap, no wait", politeness.Options{Backoff: true, CrawlDelay: true, MaxConcurrentPerHost: 2}, false, 1,
			map[string]int{"SucceededLater": 1, "Turn": 1}},
		{"delay and back-off, no wait", politeness.Options{Backoff: true, CrawlDelay: true}, false, 1,
			map[string]int{"SucceededLater": 1, "Turn": 1}},
		{"delay, back-off and cap, after a wait", politeness.Options{Backoff: true, CrawlDelay: true, MaxConcurrentPerHost: 2}, false, 2,
			map[string]int{"Pause": 1, "Start": 1, "SucceededLater": 1, "Turn": 1}},
		{"no turn", politeness.Options{Backoff: true, CrawlDelay: true, MaxConcurrentPerHost: 2}, true, 1,
			map[string]int{"Reserve": 1, "Start": 1, "SucceededLater": 1, "Turn": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The scheduler's last reading of the clock when Admit
			// returns is the one its claim was granted at: the starts,
			// on the clock it spaces them by.
			var mu sync.Mutex
			var last time.Time
			now := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				last = time.Now()
				return last
			}
			c := &turnCounter{callCounter: &callCounter{LocalScheduler: politeness.NewLocalScheduler(politeness.LocalOptions{Now: now}), calls: map[string]int{}}, noTurn: tt.noTurn}
			tt.o.Scheduler = c
			l := politeness.New(tt.o)
			req := politeness.Request{Key: keyA, Delay: 20 * time.Millisecond, HasDelay: true}
			var starts []time.Time
			for i := 1; i <= tt.nth; i++ {
				c.reset()
				tk := l.Admit(context.Background(), req)
				if tk.Refused != "" {
					t.Fatalf("request %d refused: %+v", i, tk)
				}
				mu.Lock()
				starts = append(starts, last)
				mu.Unlock()
				if err := l.Observe(context.Background(), tk, http.StatusOK, "", ""); err != nil {
					t.Fatal(err)
				}
				tk.Release()
			}
			if got := fmt.Sprint(c.calls); got != fmt.Sprint(tt.want) {
				t.Errorf("calls of request %d: got %v, want %v", tt.nth, got, tt.want)
			}
			if len(starts) == 2 && starts[1].Sub(starts[0]) < 20*time.Millisecond {
				t.Errorf("two starts %v apart, want the crawl delay (20ms)", starts[1].Sub(starts[0]))
			} else if len(starts) == 2 {
				t.Logf("two starts %v apart (delay 20ms)", starts[1].Sub(starts[0]))
			}
		})
	}
}
