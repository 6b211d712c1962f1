package politeness_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// fakeClock is a settable clock. Its Sleep advances it; its Block waits
// until Advance moves it past the wake-up time.
type fakeClock struct {
	mu       sync.Mutex
	t        time.Time
	sleepers []sleeper
}

type sleeper struct {
	until time.Time
	wake  chan struct{}
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on and wakes the Block calls that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	kept := c.sleepers[:0]
	for _, s := range c.sleepers {
		if s.until.After(c.t) {
			kept = append(kept, s)
		} else {
			close(s.wake)
		}
	}
	c.sleepers = kept
}

// Sleep is a Limiter's Sleep that advances the clock by d.
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// Block is a Limiter's Sleep that waits for Advance.
func (c *fakeClock) Block(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	s := sleeper{until: c.t.Add(d), wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sleeping returns the number of Block calls waiting.
func (c *fakeClock) Sleeping() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}

var keyA = politeness.Key{Token: "Bot", Authority: "http://a.example:80"}

func TestLocalSchedulerReserve(t *testing.T) {
	s := time.Second
	type step struct {
		advance, delay, maxWait time.Duration
		want                    politeness.Slot
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first request starts at once", []step{{0, 2 * s, time.Minute, politeness.Slot{Granted: true}}}},
		{"second waits the delay, start to start", []step{
			{0, 2 * s, time.Minute, politeness.Slot{Granted: true}},
			{s / 2, 2 * s, time.Minute, politeness.Slot{Wait: 3 * s / 2, Granted: true, Cause: politeness.CauseCrawlDelay}},
		}},
		{"slots queue in order", []step{
			{0, 2 * s, time.Minute, politeness.Slot{Granted: true}},
			{0, 2 * s, time.Minute, politeness.Slot{Wait: 2 * s, Granted: true, Cause: politeness.CauseCrawlDelay}},
			{0, 2 * s, time.Minute, politeness.Slot{Wait: 4 * s, Granted: true, Cause: politeness.CauseCrawlDelay}},
		}},
		{"past the delay starts at once", []step{
			{0, 2 * s, time.Minute, politeness.Slot{Granted: true}},
			{3 * s, 2 * s, time.Minute, politeness.Slot{Granted: true}},
		}},
		{"too far off is not granted nor recorded", []step{
			{0, 2 * s, time.Minute, politeness.Slot{Granted: true}},
			{0, 2 * s, s, politeness.Slot{Wait: 2 * s, Cause: politeness.CauseCrawlDelay}},
			{0, 2 * s, time.Minute, politeness.Slot{Wait: 2 * s, Granted: true, Cause: politeness.CauseCrawlDelay}},
		}},
		{"the delay of the previous start spaces the next", []step{
			{0, 5 * s, time.Minute, politeness.Slot{Granted: true}},
			{0, 0, time.Minute, politeness.Slot{Wait: 5 * s, Granted: true, Cause: politeness.CauseCrawlDelay}},
			{0, 0, time.Minute, politeness.Slot{Wait: 5 * s, Granted: true, Cause: politeness.CauseCrawlDelay}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
			for i, st := range tt.steps {
				clk.Advance(st.advance)
				got, err := sch.Reserve(context.Background(), keyA, st.delay, st.maxWait)
				if err != nil || got != st.want {
					t.Fatalf("step %d: Reserve(delay %v, maxWait %v) = %+v, %v; want %+v", i, st.delay, st.maxWait, got, err, st.want)
				}
			}
		})
	}
}

func TestLocalSchedulerKeysAreSeparate(t *testing.T) {
	clk := newFakeClock()
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
	ctx := context.Background()
	keys := []politeness.Key{keyA, {Token: "Other", Authority: keyA.Authority}, {Token: keyA.Token, Authority: "https://a.example:443"}}
	for _, k := range keys {
		if got, _ := sch.Reserve(ctx, k, time.Second, time.Minute); got.Wait != 0 {
			t.Errorf("Reserve(%v): got wait %v, want 0 (a key of its own)", k, got.Wait)
		}
	}
}

func TestLocalSchedulerBackoff(t *testing.T) {
	clk := newFakeClock()
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now, DefaultBackoff: time.Second, MaxBackoff: 5 * time.Second})
	ctx := context.Background()
	backoff := func(b politeness.Backoff, want time.Duration) {
		t.Helper()
		if got, err := sch.Backoff(ctx, keyA, b); err != nil || got != want {
			t.Fatalf("Backoff(%+v) = %v, %v; want %v", b, got, err, want)
		}
	}
	reserve := func(want politeness.Slot) {
		t.Helper()
		if got, err := sch.Reserve(ctx, keyA, 0, time.Hour); err != nil || got != want {
			t.Fatalf("Reserve = %+v, %v; want %+v", got, err, want)
		}
	}
	// 429s without Retry-After double the pause: 1s, 2s, 4s, then the cap.
	backoff(politeness.Backoff{}, time.Second)
	reserve(politeness.Slot{Wait: time.Second, Granted: true, Cause: politeness.CauseBackoff})
	clk.Advance(time.Second)
	backoff(politeness.Backoff{}, 2*time.Second)
	clk.Advance(2 * time.Second)
	backoff(politeness.Backoff{}, 4*time.Second)
	// A success during the pause clears nothing.
	if err := sch.Succeeded(ctx, keyA); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Second)
	backoff(politeness.Backoff{}, 5*time.Second) // capped
	// A shorter Retry-After does not shorten the pause.
	backoff(politeness.Backoff{RetryAfter: time.Second, HasRetryAfter: true}, 5*time.Second)
	clk.Advance(5 * time.Second)
	reserve(politeness.Slot{Granted: true})
	// The first success after the pause clears the streak.
	if err := sch.Succeeded(ctx, keyA); err != nil {
		t.Fatal(err)
	}
	backoff(politeness.Backoff{}, time.Second)
	// Retry-After is capped too.
	clk.Advance(time.Second)
	backoff(politeness.Backoff{RetryAfter: time.Hour, HasRetryAfter: true}, 5*time.Second)
	if got, _ := sch.Pause(ctx, keyA); got != 5*time.Second {
		t.Errorf("Pause: got %v, want 5s", got)
	}
}

func TestLocalSchedulerBounded(t *testing.T) {
	clk := newFakeClock()
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now, MaxEntries: 3, MaxBackoff: time.Minute})
	ctx := context.Background()
	key := func(i int) politeness.Key {
		return politeness.Key{Token: "Bot", Authority: fmt.Sprintf("http://h%d:80", i)}
	}
	for i := range 3 {
		if _, err := sch.Reserve(ctx, key(i), time.Second, time.Minute); err != nil {
			t.Fatalf("Reserve(%d): %v", i, err)
		}
	}
	if _, err := sch.Reserve(ctx, key(3), time.Second, time.Minute); !errors.Is(err, politeness.ErrFull) {
		t.Fatalf("Reserve past MaxEntries with every key active: got %v, want ErrFull", err)
	}
	// A key without a delay needs no entry.
	if got, err := sch.Reserve(ctx, key(4), 0, time.Minute); err != nil || !got.Granted {
		t.Fatalf("Reserve without delay when full: got %+v, %v; want granted", got, err)
	}
	clk.Advance(time.Second) // every key idle
	if _, err := sch.Reserve(ctx, key(3), time.Second, time.Minute); err != nil {
		t.Fatalf("Reserve after the keys went idle: %v", err)
	}
	if n := sch.Len(); n != 1 {
		t.Errorf("Len after the sweep: got %d, want 1", n)
	}
	// A back-off streak is kept MaxBackoff past the pause.
	if _, err := sch.Backoff(ctx, key(5), politeness.Backoff{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(politeness.DefaultBackoffPause + 30*time.Second)
	reserve := func(i int) {
		t.Helper()
		if _, err := sch.Reserve(ctx, key(i), time.Second, time.Minute); err != nil {
			t.Fatalf("Reserve(%d): %v", i, err)
		}
	}
	reserve(6)
	clk.Advance(2 * time.Second) // keys 3 and 6 idle, 5 keeps its streak
	reserve(7)
	if n := sch.Len(); n != 2 {
		t.Errorf("Len after the second sweep: got %d, want 2 (keys 5 and 7)", n)
	}
	clk.Advance(time.Minute) // the streak aged out
	reserve(8)
	reserve(9)
	if n := sch.Len(); n != 2 {
		t.Errorf("Len after the third sweep: got %d, want 2 (keys 8 and 9)", n)
	}
}

// TestLocalSchedulerStartFollowsLateStarts: a request that starts late for
// its slot pushes the next start back, so that starts stay the delay apart
// whatever the slots said.
func TestLocalSchedulerStartFollowsLateStarts(t *testing.T) {
	clk := newFakeClock()
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
	ctx := context.Background()
	for i := range 3 { // slots at 0s, 1s, 2s
		if got, _ := sch.Reserve(ctx, keyA, time.Second, time.Minute); got.Wait != time.Duration(i)*time.Second {
			t.Fatalf("slot %d: got wait %v, want %ds", i, got.Wait, i)
		}
	}
	start := func(want time.Duration) {
		t.Helper()
		if got, err := sch.Start(ctx, keyA, time.Second, 0); err != nil || got.Wait != want {
			t.Fatalf("Start: got %v, %v; want %v", got, err, want)
		}
	}
	start(0)
	clk.Advance(1500 * time.Millisecond) // the second request wakes 0.5s late
	start(0)
	clk.Advance(500 * time.Millisecond) // the third is on time for its slot
	start(500 * time.Millisecond)       // but must wait for the late one's delay
	clk.Advance(500 * time.Millisecond)
	start(0)
	// A slot reserved now follows the last start, not the last slot.
	if got, _ := sch.Reserve(ctx, keyA, time.Second, time.Minute); got.Wait != time.Second {
		t.Errorf("Reserve after the starts: got wait %v, want 1s", got.Wait)
	}
}

// TestLocalSchedulerFullAdmitsOnceIdle: on a full LocalScheduler, a new
// key is refused while every key is active and admitted as soon as one is
// idle, however the keys' ends moved after they were added.
func TestLocalSchedulerFullAdmitsOnceIdle(t *testing.T) {
	keyB := politeness.Key{Token: "Bot", Authority: "http://b.example:80"}
	type step struct {
		advance   time.Duration
		succeeded bool  // keyA's request succeeded
		wantErr   error // of a new key
	}
	tests := []struct {
		name  string
		setup func(ctx context.Context, sch *politeness.LocalScheduler) error
		steps []step
	}{
		{"a key that started later stays until its new end", func(ctx context.Context, sch *politeness.LocalScheduler) error {
			_, errA := sch.Reserve(ctx, keyA, time.Second, 0)
			_, errB := sch.Reserve(ctx, keyB, 5*time.Second, 0)
			_, errS := sch.Start(ctx, keyA, 3*time.Second, 0) // A ends at 3s, not 1s
			return errors.Join(errA, errB, errS)
		}, []step{{time.Second, false, politeness.ErrFull}, {2*time.Second - 1, false, politeness.ErrFull}, {1, false, nil}}},
		{"a success forgets a streak at once", func(ctx context.Context, sch *politeness.LocalScheduler) error {
			_, errA := sch.Backoff(ctx, keyA, politeness.Backoff{}) // ends 5s + MaxBackoff
			_, errB := sch.Reserve(ctx, keyB, 10*time.Second, 0)
			return errors.Join(errA, errB)
		}, []step{{politeness.DefaultBackoffPause, false, politeness.ErrFull}, {0, true, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now, MaxEntries: 2, MaxBackoff: time.Minute})
			ctx := context.Background()
			if err := tt.setup(ctx, sch); err != nil {
				t.Fatal(err)
			}
			for i, st := range tt.steps {
				clk.Advance(st.advance)
				if st.succeeded {
					if err := sch.Succeeded(ctx, keyA); err != nil {
						t.Fatal(err)
					}
				}
				k := politeness.Key{Token: "Bot", Authority: fmt.Sprintf("http://new%d.example:80", i)}
				if _, err := sch.Reserve(ctx, k, time.Hour, 0); !errors.Is(err, st.wantErr) {
					t.Fatalf("step %d: new key after %v: got %v, want %v", i, st.advance, err, st.wantErr)
				}
			}
		})
	}
}
