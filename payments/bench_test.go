package payments_test

import (
	"context"
	"testing"

	"github.com/robotsproxy/robotsproxy/payments"
)

// BenchmarkLocalReserve is one paid request's ledger work in memory: a
// reservation and its settlement.
func BenchmarkLocalReserve(b *testing.B) {
	l := &payments.Local{}
	k := payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if ok, err := l.Reserve(ctx, k, 10_000, payments.MaxAmount); !ok || err != nil {
				b.Fatal(ok, err)
			}
			if err := l.Adjust(ctx, k, -10_000, payments.MaxAmount); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParsePrice reads a crawler-price value.
func BenchmarkParsePrice(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := payments.ParsePrice("USD 0.01"); err != nil {
			b.Fatal(err)
		}
	}
}
