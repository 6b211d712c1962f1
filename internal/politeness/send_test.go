package politeness_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// TestLocalSchedulerClaims: a claim with a lease holds the turn until
// Sent ends it; the next turn is counted from the send (less how long ago
// it was), is free at once after a request that was never sent, and
// follows the lease's end when no Sent comes. Slots are not pushed back
// by the lease.
func TestLocalSchedulerClaims(t *testing.T) {
	const delay, lease = time.Second, 10 * time.Second
	type step struct {
		advance time.Duration
		do      string // "start", "sent", "unsent", "sent-old" (Sent of the first claim), "reserve"
		ago     time.Duration
		want    politeness.Claim // of start: Wait and Held (ID: claimed or not); of reserve: Wait
	}
	claimed := politeness.Claim{ID: 1} // any ID above 0
	tests := []struct {
		name  string
		steps []step
	}{
		{"held until sent, then the delay after the send", []step{
			{0, "start", 0, claimed},
			{0, "start", 0, politeness.Claim{Wait: delay, Held: true}},
			{300 * time.Millisecond, "start", 0, politeness.Claim{Wait: delay, Held: true}},
			{0, "sent", 0, politeness.Claim{}},
			{0, "start", 0, politeness.Claim{Wait: delay}},
			{delay - 1, "start", 0, politeness.Claim{Wait: 1}},
			{1, "start", 0, claimed},
		}},
		{"sent ago", []step{
			{0, "start", 0, claimed},
			{500 * time.Millisecond, "sent", 200 * time.Millisecond, politeness.Claim{}},
			{0, "start", 0, politeness.Claim{Wait: delay - 200*time.Millisecond}},
		}},
		{"never sent: free at once", []step{
			{0, "start", 0, claimed},
			{2 * time.Second, "unsent", 0, politeness.Claim{}},
			{0, "start", 0, claimed},
		}},
		{"no Sent: counts as sent at the lease's end", []step{
			{0, "start", 0, claimed},
			{lease - 1, "start", 0, politeness.Claim{Wait: delay, Held: true}},
			{1, "start", 0, politeness.Claim{Wait: delay}},
			{delay, "start", 0, claimed},
			{0, "sent-old", 0, politeness.Claim{}}, // the first claim's Sent comes late: ignored
			{0, "start", 0, politeness.Claim{Wait: delay, Held: true}},
		}},
		{"slots follow the delay, not the lease", []step{
			{0, "reserve", 0, politeness.Claim{}},
			{0, "start", 0, claimed},
			{0, "reserve", 0, politeness.Claim{Wait: delay}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
			ctx := context.Background()
			var ids []uint64
			for i, st := range tt.steps {
				clk.Advance(st.advance)
				switch st.do {
				case "start":
					c, err := sch.Start(ctx, keyA, delay, lease)
					if err != nil || c.Wait != st.want.Wait || c.Held != st.want.Held || (c.ID != 0) != (st.want.ID != 0) {
						t.Fatalf("step %d: Start: got %+v, %v; want %+v", i, c, err, st.want)
					}
					if c.ID != 0 {
						ids = append(ids, c.ID)
					}
				case "sent", "unsent":
					if err := sch.Sent(ctx, keyA, ids[len(ids)-1], delay, st.ago, st.do == "sent"); err != nil {
						t.Fatal(err)
					}
				case "sent-old":
					if err := sch.Sent(ctx, keyA, ids[0], delay, 0, true); err != nil {
						t.Fatal(err)
					}
				case "reserve":
					if s, err := sch.Reserve(ctx, keyA, delay, time.Minute); err != nil || s.Wait != st.want.Wait {
						t.Fatalf("step %d: Reserve: got %+v, %v; want wait %v", i, s, err, st.want.Wait)
					}
				}
			}
		})
	}
}

// TestLimiterSpacingFromSend: requests that take a varying time from
// their admission to their send (a busy machine, a connection to open)
// are sent at least the delay apart, on the real clock. Counted from the
// admission instead (Options.CountFromSend false), the same run breaks
// the spacing: the test can fail.
func TestLimiterSpacingFromSend(t *testing.T) {
	const delay, n = 40 * time.Millisecond, 8
	run := func(fromSend bool) []time.Duration {
		l := politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: fromSend})
		var mu sync.Mutex
		var sends []time.Time
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				tk := l.Admit(context.Background(), politeness.Request{Key: keyA, Delay: delay, HasDelay: true})
				defer tk.Release()
				if tk.Refused != "" {
					t.Errorf("refused: %+v", tk)
					return
				}
				if fromSend != tk.Paced() {
					t.Errorf("Paced: got %v, want %v", tk.Paced(), fromSend)
				}
				// Every other request is held up on its way out.
				time.Sleep(time.Duration(i%2) * 3 * delay / 4)
				if err := tk.Sending(); err != nil {
					t.Errorf("Sending: %v", err)
					return
				}
				mu.Lock()
				sends = append(sends, time.Now()) // the write
				mu.Unlock()
				tk.Wrote()
			})
		}
		wg.Wait()
		var gaps []time.Duration
		for i := 1; i < len(sends); i++ {
			gaps = append(gaps, sends[i].Sub(sends[i-1]))
		}
		return gaps
	}
	least := time.Hour
	for i, g := range run(true) {
		if least = min(least, g); g < delay {
			t.Errorf("sends %d and %d: %v apart, want at least %v", i, i+1, g, delay)
		}
	}
	t.Logf("counted from the send: sends at least %v apart (delay %v)", least, delay)
	broken := false
	for _, g := range run(false) {
		broken = broken || g < delay
	}
	if !broken {
		t.Errorf("counted from the admission, every send was still %v apart: the test cannot tell", delay)
	}
}

// TestTicketSends: what a Paced ticket does with a late send, a second
// send, and a release before any send.
func TestTicketSends(t *testing.T) {
	const delay = 30 * time.Millisecond
	req := politeness.Request{Key: keyA, Delay: delay, HasDelay: true}
	newLimiter := func(within time.Duration) *politeness.Limiter {
		return politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: true, SendWithin: within})
	}
	t.Run("not sent within SendWithin: not sent, and the next goes at once", func(t *testing.T) {
		l := newLimiter(50 * time.Millisecond)
		tk := l.Admit(context.Background(), req)
		time.Sleep(60 * time.Millisecond)
		if err := tk.Sending(); !errors.Is(err, politeness.ErrTurnLost) {
			t.Fatalf("Sending after SendWithin: got %v, want ErrTurnLost", err)
		}
		if err := tk.Sending(); !errors.Is(err, politeness.ErrTurnLost) { // a transport's second try
			t.Errorf("Sending again: got %v, want ErrTurnLost", err)
		}
		tk.Release()
		next := l.Admit(context.Background(), req)
		defer next.Release()
		if next.Refused != "" || next.Waited > 0 {
			t.Errorf("the next request: got %+v, want admitted at once (the slot was 30ms after the first)", next)
		}
	})
	t.Run("a second send waits for a turn of its own", func(t *testing.T) {
		l := newLimiter(time.Second)
		tk := l.Admit(context.Background(), req)
		defer tk.Release()
		if err := tk.Sending(); err != nil {
			t.Fatal(err)
		}
		first := time.Now()
		tk.Wrote()
		if err := tk.Sending(); err != nil {
			t.Fatal(err)
		}
		if gap := time.Since(first); gap < delay {
			t.Errorf("second send %v after the first, want at least %v", gap, delay)
		}
		tk.Wrote()
	})
	t.Run("released unsent: the next is not held", func(t *testing.T) {
		l := newLimiter(time.Second) // held to its lease, the next would wait 1s
		tk := l.Admit(context.Background(), req)
		tk.Release()
		if err := tk.Sending(); err != nil { // a write after Release is not the request's
			t.Errorf("Sending after Release: got %v, want nil", err)
		}
		start := time.Now()
		next := l.Admit(context.Background(), req)
		defer next.Release()
		if took := time.Since(start); next.Refused != "" || took > delay+500*time.Millisecond {
			t.Errorf("the next request: %+v after %v, want admitted at its slot (%v)", next, took, delay)
		}
	})
}

// BenchmarkLimiterCrawlDelay is one request's admission and release on
// a key with a crawl delay too small to wait for: counted from the
// admission (as before CountFromSend), and counted from the send, with
// the two calls the proxy's connection makes.
func BenchmarkLimiterCrawlDelay(b *testing.B) {
	req := politeness.Request{Key: keyA, Delay: time.Nanosecond, HasDelay: true}
	ctx := context.Background()
	for _, fromSend := range []bool{false, true} {
		name := map[bool]string{false: "admission", true: "send"}[fromSend]
		b.Run(name, func(b *testing.B) {
			l := politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: fromSend})
			b.ReportAllocs()
			for b.Loop() {
				tk := l.Admit(ctx, req)
				if fromSend {
					_ = tk.Sending()
					tk.Wrote()
				}
				tk.Release()
			}
		})
	}
}
