package payments_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
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

// BenchmarkRemovePriceFields is the price field check every forwarded
// request gets when an egress step is on: a browser-like header with no
// price field (the common case), and one with a client's own.
func BenchmarkRemovePriceFields(b *testing.B) {
	base := http.Header{"User-Agent": {"ExampleBot/1.0"}, "Accept": {"text/html"}, "Accept-Language": {"en"},
		"Accept-Encoding": {"gzip, br"}, "Cookie": {"a=b"}, "Upgrade-Insecure-Requests": {"1"},
		"Sec-Fetch-Mode": {"navigate"}, "Cache-Control": {"max-age=0"}}
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if payments.RemovePriceFields(base) {
				b.Fatal("removed a field")
			}
		}
	})
	b.Run("one", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := base.Clone()
			h["Crawler_Max_Price"] = []string{"USD 1"}
			if !payments.RemovePriceFields(h) {
				b.Fatal("kept it")
			}
		}
	})
}
