package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
)

// spendLimits is one budget for examplebot: 0.05 a request, perDay a day.
func spendLimits(perDay string) *egress.Table[payments.Limit] {
	a, err := payments.ParseAmount(perDay)
	if err != nil {
		panic(err)
	}
	return &egress.Table[payments.Limit]{Tokens: map[string]payments.Limit{"examplebot": {
		Budget: "token:examplebot", Currency: "USD", MaxPrice: 50_000, PerDay: a}}}
}

func payingTransport(l payments.Ledger, perDay string) *payments.Transport {
	return &payments.Transport{Next: &http.Transport{MaxIdleConnsPerHost: 32}, Limits: spendLimits(perDay), Ledger: l}
}

// 20 concurrent priced requests against a budget that allows exactly 7,
// from one proxy and from two proxies sharing one store: exactly 7 are
// paid, by the origin's count and the store's.
func TestSharedBudgetConcurrent(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		t.Run(map[int]string{1: "one proxy", 2: "two proxies"}[replicas], func(t *testing.T) {
			url := startRedis(t).URL()
			o := paytest.New(t, "USD 0.01")
			var rts []http.RoundTripper
			var first payments.Ledger
			for range replicas {
				l := newReplica(t, url, nil).Ledger(nil)
				if first == nil {
					first = l
				}
				rts = append(rts, payingTransport(l, "0.075"))
			}
			paid, unpaid := paytest.Concurrent(t, rts, o.URL+"/page", "examplebot", 20)
			if paid != 7 || unpaid != 13 || o.Paid() != 7 {
				t.Fatalf("paid %d, unpaid %d, origin paid %d; want 7, 13, 7", paid, unpaid, o.Paid())
			}
			k := payments.Key{Budget: "token:examplebot", Currency: "USD", Day: payments.DayOf(time.Now())}
			spent, err := first.(*ledger).Spent(context.Background(), k)
			if err != nil || spent.String() != "0.07" {
				t.Fatalf("store spend %s, %v; want 0.07", spent, err)
			}
		})
	}
}

// The store's spend key: the budget as hash tag, a TTL, released spend
// never below zero.
func TestSpendKey(t *testing.T) {
	r := newReplica(t, startRedis(t).URL(), nil)
	l := r.Ledger(nil).(*ledger)
	k := payments.Key{Budget: "user:alice", Currency: "EUR", Day: "2026-11-26"}
	if got, want := l.spendKey(k), "test:v2:spend:{user:alice} EUR 2026-11-26"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		ok, err := l.Reserve(ctx, k, 40, 100)
		if err != nil || ok != want {
			t.Fatalf("reserve %d: %v, %v; want %v", i, ok, err, want)
		}
	}
	ttl, err := r.rdb.TTL(ctx, l.spendKey(k)).Result()
	if err != nil || ttl <= 47*time.Hour || ttl > spendTTL {
		t.Errorf("TTL %v, %v; want about %v", ttl, err, spendTTL)
	}
	if err := l.Adjust(ctx, k, -500, 100); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Spent(ctx, k); got != 0 {
		t.Errorf("spend after releasing more than spent: %d, want 0", got)
	}
}

// A store that goes away: nothing is paid (store-unavailable), and the
// ledger's errors wrap payments.ErrStoreUnavailable.
func TestSpendStoreGone(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv.URL(), func(o *Options) { o.Timeout = 200 * time.Millisecond })
	o := paytest.New(t, "USD 0.01")
	tr := payingTransport(r.Ledger(nil), "1")
	if paid, _ := paytest.Concurrent(t, []http.RoundTripper{tr}, o.URL+"/page", "examplebot", 1); paid != 1 {
		t.Fatalf("with the store up: paid %d, want 1", paid)
	}
	srv.Kill()
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodGet, o.URL+"/page", nil)
		x := &egress.Exchange{Identity: egress.Identity{Token: "examplebot"}}
		resp, err := tr.RoundTrip(req.WithContext(egress.NewContext(req.Context(), x)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 402 || x.Record.NotPaid != auditlog.NotPaidStoreUnavailable ||
			resp.Header.Get(payments.HeaderNotPaid) != auditlog.NotPaidStoreUnavailable {
			t.Fatalf("request %d with the store gone: %d, %+v", i, resp.StatusCode, x.Record)
		}
	}
	if o.Paid() != 1 {
		t.Errorf("origin paid %d, want 1 (nothing while the store is gone)", o.Paid())
	}
	_, err := r.Ledger(nil).Reserve(context.Background(), payments.Key{Budget: "b", Currency: "USD", Day: "2026-11-26"}, 1, 10)
	if !errors.Is(err, payments.ErrStoreUnavailable) || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("Reserve with the store gone: %v, want ErrStoreUnavailable", err)
	}
}

// BenchmarkSharedReserve is one paid request's ledger work in the store:
// the breach block check, the reserve script and the settle script, three
// round trips.
func BenchmarkSharedReserve(b *testing.B) {
	srv := startRedis(b)
	s, err := New(Options{URL: srv.URL(), KeyPrefix: "bench:"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	l := s.Ledger(nil)
	k := payments.Key{Budget: "token:examplebot", Currency: "USD", Day: "2026-11-26"}
	ctx := context.Background()
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		if blocked, err := l.Blocked(ctx, "shop.example", now); blocked || err != nil {
			b.Fatal(blocked, err)
		}
		if ok, err := l.Reserve(ctx, k, 10_000, payments.MaxAmount); !ok || err != nil {
			b.Fatal(ok, err)
		}
		if err := l.Adjust(ctx, k, -10_000, payments.MaxAmount); err != nil {
			b.Fatal(err)
		}
	}
}

// Under each hostile origin, 30 concurrent requests through one proxy,
// and through two sharing one store, never commit more than the day's
// budget in the store.
func TestSharedCeilingHostile(t *testing.T) {
	for _, h := range paytest.HostileOrigins {
		for _, replicas := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d proxies", h.Name, replicas), func(t *testing.T) {
				url := startRedis(t).URL()
				o := paytest.New(t, "USD 0.01")
				var rts []http.RoundTripper
				var first *ledger
				for range replicas {
					l := newReplica(t, url, nil).Ledger(nil)
					if first == nil {
						first = l.(*ledger)
					}
					rts = append(rts, payingTransport(l, "0.05"))
				}
				k := payments.Key{Budget: "token:examplebot", Currency: "USD", Day: payments.DayOf(time.Now())}
				paytest.CheckCeiling(t, o, rts, "examplebot", 30, h, 50_000, func() payments.Amount {
					spent, err := first.Spent(context.Background(), k)
					if err != nil {
						t.Fatal(err)
					}
					return spent
				})
			})
		}
	}
}

// Adjust in the store is capped by the budget, and a host blocked by one
// replica is blocked for the other until the block ends.
func TestSharedAdjustCapAndBlock(t *testing.T) {
	url := startRedis(t).URL()
	a, b := newReplica(t, url, nil).Ledger(nil).(*ledger), newReplica(t, url, nil).Ledger(nil)
	ctx := context.Background()
	k := payments.Key{Budget: "user:alice", Currency: "EUR", Day: "2026-11-26"}
	if ok, err := a.Reserve(ctx, k, 40, 100); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, delta := range []payments.Amount{50, 50, 50} {
		if err := b.Adjust(ctx, k, delta, 100); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := a.Spent(ctx, k); got != 100 {
		t.Errorf("spend %d after capped adjusts, want 100", got)
	}
	now := time.Now()
	if err := a.Block(ctx, "shop.example", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.Block(ctx, "shop.example", now, time.Second); err != nil { // never shortens
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		at   time.Time
		want bool
	}{
		{"shop.example", now, true},
		{"shop.example", now.Add(30 * time.Second), true},
		{"shop.example", now.Add(time.Minute), false},
		{"other.example", now, false},
	} {
		got, err := b.Blocked(ctx, c.host, c.at)
		if err != nil || got != c.want {
			t.Errorf("Blocked(%s, +%v) = %v, %v; want %v", c.host, c.at.Sub(now), got, err, c.want)
		}
	}
}
