package politeness_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// fullScheduler returns a LocalScheduler holding its default MaxEntries
// keys, key i active until i*stagger+life from the clock's time, and the
// new keys to ask for: a key comes back after 400,000 others.
func fullScheduler(b *testing.B, clk *fakeClock, stagger, life time.Duration) (*politeness.LocalScheduler, func(i int) politeness.Key) {
	b.Helper()
	const n = politeness.DefaultMaxEntries
	keys := make([]politeness.Key, 5*n)
	for i := range keys {
		keys[i] = politeness.Key{Token: "Bot", Authority: fmt.Sprintf("https://h%d.example:443", i)}
	}
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{Now: clk.Now})
	ctx := context.Background()
	for i := range n {
		if _, err := sch.Reserve(ctx, keys[i], life, 0); err != nil {
			b.Fatalf("fill key %d: %v", i, err)
		}
		clk.Advance(stagger)
	}
	return sch, func(i int) politeness.Key { return keys[n+i%(4*n)] }
}

// BenchmarkLocalSchedulerFull: a new key asks a LocalScheduler whose
// 100,000 keys are all active (a crawler fanning out over an origin's
// wildcard subdomains). Each answer is ErrFull; its cost is what every
// other request waits for on the scheduler's lock.
func BenchmarkLocalSchedulerFull(b *testing.B) {
	clk := newFakeClock()
	sch, key := fullScheduler(b, clk, 0, 30*time.Second)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := sch.Reserve(ctx, key(i), time.Second, 0); !errors.Is(err, politeness.ErrFull) {
			b.Fatalf("new key %d: got %v, want ErrFull", i, err)
		}
		i++
	}
}

// BenchmarkLocalSchedulerFullStaggered: as BenchmarkLocalSchedulerFull,
// but the keys go idle one by one, 100µs apart, and a new key comes as
// each one does and stays as long: each new key drops one.
func BenchmarkLocalSchedulerFullStaggered(b *testing.B) {
	clk := newFakeClock()
	const stagger = 100 * time.Microsecond
	const life = politeness.DefaultMaxEntries * stagger // 10s
	sch, key := fullScheduler(b, clk, stagger, life)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := sch.Reserve(ctx, key(i), life, 0); err != nil {
			b.Fatalf("new key %d: %v", i, err)
		}
		clk.Advance(stagger)
		i++
	}
}
