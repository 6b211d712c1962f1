package politeness_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

func TestLocalGate(t *testing.T) {
	g := politeness.NewLocalGate(2)
	ctx := context.Background()
	r1, err1 := g.Acquire(ctx, "a", false)
	r2, err2 := g.Acquire(ctx, "a", false)
	if err1 != nil || err2 != nil {
		t.Fatalf("two slots of two: %v, %v", err1, err2)
	}
	if _, err := g.Acquire(ctx, "a", false); !errors.Is(err, politeness.ErrBusy) {
		t.Fatalf("third without waiting: got %v, want ErrBusy", err)
	}
	if r, err := g.Acquire(ctx, "b", false); err != nil {
		t.Fatalf("another authority: %v", err)
	} else {
		r()
	}
	// Waiters are served in order.
	order := make(chan int, 2)
	var waiters sync.WaitGroup
	for i := range 2 {
		waiters.Go(func() {
			r, err := g.Acquire(ctx, "a", true)
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			time.Sleep(10 * time.Millisecond)
			r()
		})
		time.Sleep(20 * time.Millisecond) // waiter 0 queues before waiter 1
	}
	r1()
	r1() // twice does nothing
	if got := <-order; got != 0 {
		t.Errorf("first waiter served: got %d, want 0", got)
	}
	r2()
	if got := <-order; got != 1 {
		t.Errorf("second waiter served: got %d, want 1", got)
	}
	waiters.Wait() // each has released its slot (not a sleep: a busy machine runs them late)
	if n := g.Len(); n != 0 {
		t.Errorf("Len with nothing in flight: got %d, want 0", n)
	}
	// A waiter whose context ends leaves no state.
	r, _ := g.Acquire(ctx, "c", false)
	r2c, _ := g.Acquire(ctx, "c", false)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(cctx, "c", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter past its deadline: got %v, want DeadlineExceeded", err)
	}
	r()
	r2c()
	if n := g.Len(); n != 0 {
		t.Errorf("Len after a waiter gave up: got %d, want 0", n)
	}
}

func TestLimiterConcurrencyCap(t *testing.T) {
	other := politeness.Key{Token: "Other", Authority: keyA.Authority}
	t.Run("wait", func(t *testing.T) {
		l := politeness.New(politeness.Options{MaxConcurrentPerHost: 1, MaxWait: time.Second})
		first := l.Admit(context.Background(), politeness.Request{Key: keyA})
		go func() { time.Sleep(50 * time.Millisecond); first.Release() }()
		tk := l.Admit(context.Background(), politeness.Request{Key: other}) // another token, same host
		defer tk.Release()
		if tk.Refused != "" || tk.Waited < 40*time.Millisecond || tk.WaitCause != politeness.CauseConcurrency {
			t.Errorf("refused %q, waited %v for %q; want about 50ms for host-concurrency", tk.Refused, tk.Waited, tk.WaitCause)
		}
	})
	t.Run("wait past max_wait", func(t *testing.T) {
		l := politeness.New(politeness.Options{MaxConcurrentPerHost: 1, MaxWait: 30 * time.Millisecond})
		first := l.Admit(context.Background(), politeness.Request{Key: keyA})
		defer first.Release()
		tk := l.Admit(context.Background(), politeness.Request{Key: other})
		if tk.Refused != politeness.CauseConcurrency || tk.Err != nil || tk.RetryAfter != time.Second {
			t.Errorf("refused %q (err %v, Retry-After %v); want host-concurrency, no error, 1s", tk.Refused, tk.Err, tk.RetryAfter)
		}
	})
	t.Run("reject", func(t *testing.T) {
		l := politeness.New(politeness.Options{MaxConcurrentPerHost: 1, Reject: true})
		first := l.Admit(context.Background(), politeness.Request{Key: keyA})
		defer first.Release()
		start := time.Now()
		tk := l.Admit(context.Background(), politeness.Request{Key: other})
		if tk.Refused != politeness.CauseConcurrency || time.Since(start) > 20*time.Millisecond {
			t.Errorf("refused %q after %v; want host-concurrency at once", tk.Refused, time.Since(start))
		}
	})
	t.Run("the start moves after a wait", func(t *testing.T) {
		// A request that waited for a slot reserves its start again, so
		// the one after it is still the delay later.
		// The starts are the scheduler's readings of the clock when it
		// granted them (startRecorder), the clock it spaces them by: no
		// slack.
		const delay = 40 * time.Millisecond
		sch := newStartRecorder()
		l := politeness.New(politeness.Options{CrawlDelay: true, MaxConcurrentPerHost: 1, Scheduler: sch})
		req := politeness.Request{Key: keyA, Delay: delay, HasDelay: true}
		first := l.Admit(context.Background(), req)
		go func() { time.Sleep(3 * delay); first.Release() }()
		second := l.Admit(context.Background(), req)
		second.Release()
		third := l.Admit(context.Background(), req)
		defer third.Release()
		if len(sch.starts) != 3 {
			t.Fatalf("starts recorded: got %d, want 3", len(sch.starts))
		}
		if gap := sch.starts[2].Sub(sch.starts[1]); gap < delay {
			t.Errorf("second and third start %v apart, want at least %v", gap, delay)
		} else {
			t.Logf("second and third start %v apart (delay %v)", gap, delay)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		value, date string
		want        time.Duration
		ok          bool
	}{
		{"", "", 0, false},
		{"120", "", 2 * time.Minute, true},
		{" 0 ", "", 0, true},
		{"-1", "", 0, false},
		{"1.5", "", 0, false},
		{"soon", "", 0, false},
		{"99999999999999999999999", "", (1 << 31) * time.Second, true},
		{"Thu, 02 Jan 2025 03:05:05 GMT", "", time.Minute, true},
		{"Thu, 02 Jan 2025 03:05:05 GMT", "Thu, 02 Jan 2025 03:04:35 GMT", 30 * time.Second, true},
		{"Thu, 02 Jan 2025 03:05:05 GMT", "garbage", time.Minute, true},
		{"Wed, 01 Jan 2025 00:00:00 GMT", "", 0, true},
		{"Thursday, 02-Jan-25 03:05:05 GMT", "", time.Minute, true},
	}
	for _, tt := range tests {
		got, ok := politeness.ParseRetryAfter(tt.value, tt.date, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q, date %q): got %v, %v; want %v, %v", tt.value, tt.date, got, ok, tt.want, tt.ok)
		}
	}
}
