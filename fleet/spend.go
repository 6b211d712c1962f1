package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/payments"
)

// spendTTL is how long a budget's day key outlives its last write: past
// the UTC day it counts, with room for replicas whose clocks differ.
const spendTTL = 48 * time.Hour

// spendReserveScript checks a budget and reserves an amount in one step.
// KEYS: the spend key. ARGV: amount, budget (millionths of the currency
// unit, payments.Amount; at most payments.MaxAmount, exact in a Lua
// number), TTL seconds. Returns 1 when reserved, 0 when the spend would
// pass the budget.
var spendReserveScript = redis.NewScript(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount, budget = tonumber(ARGV[1]), tonumber(ARGV[2])
if amount < 0 or spent + amount > budget then return 0 end
redis.call('INCRBY', KEYS[1], amount)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`)

// spendAdjustScript settles or releases a reservation. KEYS: the spend key.
// ARGV: delta (negative to release), TTL seconds. The spend never goes
// below zero. Returns the spend.
var spendAdjustScript = redis.NewScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v < 0 then
  redis.call('SET', KEYS[1], 0)
  v = 0
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return v`)

// Ledger returns the fleet's spend ledger (pay per crawl budgets) in the
// store, or local when s is nil. Each budget's spend of a UTC day is one
// key, PREFIX v2:spend:{BUDGET} CURRENCY DAY, in millionths of the
// currency unit, kept spendTTL after its last write. There is no local
// fallback: while the store is unreachable, or when it fails a script,
// Reserve and Adjust return an error wrapping payments.ErrStoreUnavailable
// and nothing is paid.
func (s *Store) Ledger(local payments.Ledger) payments.Ledger {
	if s == nil {
		return local
	}
	return &ledger{s: s}
}

// ledger is Store.Ledger.
type ledger struct{ s *Store }

// spendKey is the store key of k. The budget is the hash tag.
func (l *ledger) spendKey(k payments.Key) string {
	return l.s.key("spend", "{"+k.Budget+"} "+k.Currency+" "+k.Day)
}

// Reserve implements payments.Ledger.
func (l *ledger) Reserve(ctx context.Context, k payments.Key, amount, budget payments.Amount) (bool, error) {
	v, err := l.run(ctx, spendReserveScript, k, int64(amount), int64(budget), int64(spendTTL/time.Second))
	if err != nil {
		return false, err
	}
	n, ok := v.(int64)
	if !ok {
		return false, fmt.Errorf("%w: spend reserve script: unexpected reply %v", payments.ErrStoreUnavailable, v)
	}
	return n == 1, nil
}

// Adjust implements payments.Ledger.
func (l *ledger) Adjust(ctx context.Context, k payments.Key, delta payments.Amount) error {
	_, err := l.run(ctx, spendAdjustScript, k, int64(delta), int64(spendTTL/time.Second))
	return err
}

// Spent returns k's spend in the store (for tests and inspection).
func (l *ledger) Spent(ctx context.Context, k payments.Key) (payments.Amount, error) {
	cctx, cancel := l.s.ctx(ctx)
	defer cancel()
	n, err := l.s.rdb.Get(cctx, l.spendKey(k)).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	return payments.Amount(n), err
}

// run runs a spend script; an error wraps payments.ErrStoreUnavailable.
func (l *ledger) run(ctx context.Context, script *redis.Script, k payments.Key, args ...any) (any, error) {
	if !l.s.h.usable() {
		return nil, fmt.Errorf("%w: shared store unreachable", payments.ErrStoreUnavailable)
	}
	cctx, cancel := l.s.ctx(ctx)
	defer cancel()
	v, err := script.Run(cctx, l.s.rdb, []string{l.spendKey(k)}, args...).Result()
	if err != nil {
		if ctx.Err() == nil { // a request that ended says nothing of the store
			l.s.h.failed(opSpend, err)
		}
		return nil, fmt.Errorf("%w: %w", payments.ErrStoreUnavailable, err)
	}
	l.s.h.ok()
	return v, nil
}
