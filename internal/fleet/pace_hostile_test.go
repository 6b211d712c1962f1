package fleet

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// TestSchedulerHostileFields writes values a damaged or hostile store
// could hold into one field of a key's politeness hash. Every call on the
// key must fail into the local scheduler (which holds a 10s pause and a
// start 10s ahead) or be refused: never a shorter wait than the local
// state's, never a shared answer built from the value.
func TestSchedulerHostileFields(t *testing.T) {
	rs := startRedis(t)
	const local = 10 * time.Second
	key := politeness.Key{Token: "Bot", Authority: "http://hostile.example:80"}
	ctx := context.Background()
	calls := []struct {
		name string
		call func(sc politeness.Scheduler) (time.Duration, error)
	}{
		{"Pause", func(sc politeness.Scheduler) (time.Duration, error) { return sc.Pause(ctx, key) }},
		{"Start", func(sc politeness.Scheduler) (time.Duration, error) {
			c, err := sc.Start(ctx, key, time.Second, 0)
			return c.Wait, err
		}},
		{"Backoff", func(sc politeness.Scheduler) (time.Duration, error) {
			return sc.Backoff(ctx, key, politeness.Backoff{})
		}},
		{"Reserve", func(sc politeness.Scheduler) (time.Duration, error) {
			s, err := sc.Reserve(ctx, key, time.Second, time.Minute)
			return s.Wait, err
		}},
	}
	values := []string{"9000000000000000000", "1e300", "garbage", "-5", "1.5", "nan", "inf", "-inf", ""}
	for _, field := range []string{"f", "s", "p", "k", "h"} {
		for _, value := range values {
			for _, c := range calls {
				t.Run(field+"="+value+"/"+c.name, func(t *testing.T) {
					fallback := politeness.NewLocalScheduler(politeness.LocalOptions{})
					if _, err := fallback.Backoff(ctx, key, politeness.Backoff{RetryAfter: local, HasRetryAfter: true}); err != nil {
						t.Fatal(err)
					}
					if _, err := fallback.Start(ctx, key, local, 0); err != nil {
						t.Fatal(err)
					}
					r := newReplica(t, rs.URL(), nil)
					sc := r.Scheduler(fallback, SchedulerOptions{})
					pk := sc.(*Scheduler).paceKey(key)
					if err := r.rdb.Del(ctx, pk).Err(); err != nil {
						t.Fatal(err)
					}
					if err := r.rdb.HSet(ctx, pk, field, value).Err(); err != nil {
						t.Fatal(err)
					}
					got, err := c.call(sc)
					if err != nil {
						return // refused: fails closed
					}
					if got < local-time.Second {
						t.Errorf("got a wait of %v, want an error or the local state's %v", got, local)
					}
					if n := r.counter("fallbacks/politeness"); n != 1 {
						t.Errorf("politeness fallbacks: got %v, want 1", n)
					}
					if r.counter("errors/politeness") != 1 || r.counter("up") != 1 {
						t.Errorf("errors %v, up %v: want 1 error reply, the store still up",
							r.counter("errors/politeness"), r.counter("up"))
					}
				})
			}
		}
	}
}

// TestDurRange: a script reply outside [0, the largest time.Duration in
// microseconds] is an error, never a wrapped duration.
func TestDurRange(t *testing.T) {
	tests := []struct {
		in      any
		want    time.Duration
		wantErr bool
	}{
		{int64(0), 0, false},
		{int64(1500), 1500 * time.Microsecond, false},
		{int64(math.MaxInt64 / 1000), time.Duration(math.MaxInt64/1000) * time.Microsecond, false},
		{int64(math.MaxInt64/1000 + 1), 0, true},
		{int64(9000000000000000000), 0, true},
		{int64(math.MaxInt64), 0, true},
		{int64(-1), 0, true},
		{int64(math.MinInt64), 0, true},
		{"5", 0, true},
	}
	for _, tc := range tests {
		got, err := dur(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("dur(%v): got %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
