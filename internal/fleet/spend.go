package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
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
// ARGV: delta (negative to release), budget, TTL seconds. The spend never
// goes below zero, and a positive delta adds at most what keeps it at or
// below the budget. Returns the spend.
var spendAdjustScript = redis.NewScript(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local delta, budget = tonumber(ARGV[1]), tonumber(ARGV[2])
if delta > 0 then delta = math.max(0, math.min(delta, budget - spent)) end
local v = spent + delta
if v < 0 then v = 0 end
redis.call('SET', KEYS[1], string.format('%d', v))
redis.call('EXPIRE', KEYS[1], ARGV[3])
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
	v, err := l.run(ctx, spendReserveScript, l.spendKey(k), int64(amount), int64(budget), int64(spendTTL/time.Second))
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
func (l *ledger) Adjust(ctx context.Context, k payments.Key, delta, budget payments.Amount) error {
	_, err := l.run(ctx, spendAdjustScript, l.spendKey(k), int64(delta), int64(budget), int64(spendTTL/time.Second))
	return err
}

// blockKey is the store key that blocks payments to host.
func (l *ledger) blockKey(host string) string { return l.s.key("payblock", host) }

// Block implements payments.Ledger: the key PREFIX v2:payblock:HOST holds
// the end of the block in Unix milliseconds and expires then.
func (l *ledger) Block(ctx context.Context, host string, now time.Time, d time.Duration) error {
	_, err := l.run(ctx, blockScript, l.blockKey(host), now.Add(d).UnixMilli(), max(d.Milliseconds(), 1))
	return err
}

// Blocked implements payments.Ledger.
func (l *ledger) Blocked(ctx context.Context, host string, now time.Time) (bool, error) {
	v, err := l.run(ctx, blockedScript, l.blockKey(host))
	if err != nil {
		return false, err
	}
	until, ok := v.(int64)
	if !ok {
		return false, fmt.Errorf("%w: payment block script: unexpected reply %v", payments.ErrStoreUnavailable, v)
	}
	return now.UnixMilli() < until, nil
}

// blockScript blocks a host, never shortening a block in force. KEYS: the
// block key. ARGV: the end in Unix milliseconds, the TTL in milliseconds.
var blockScript = redis.NewScript(`
local u = tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur >= u then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return u`)

// blockedScript returns the end of a host's block in Unix milliseconds,
// 0 when there is none.
var blockedScript = redis.NewScript(`return tonumber(redis.call('GET', KEYS[1]) or '0')`)

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

// run runs a script on key; an error wraps payments.ErrStoreUnavailable.
func (l *ledger) run(ctx context.Context, script *redis.Script, key string, args ...any) (any, error) {
	if !l.s.h.usable() {
		return nil, fmt.Errorf("%w: shared store unreachable", payments.ErrStoreUnavailable)
	}
	cctx, cancel := l.s.ctx(ctx)
	defer cancel()
	v, err := script.Run(cctx, l.s.rdb, []string{key}, args...).Result()
	if err != nil {
		if ctx.Err() == nil { // a request that ended says nothing of the store
			l.s.h.failed(opSpend, err)
		}
		return nil, fmt.Errorf("%w: %w", payments.ErrStoreUnavailable, err)
	}
	l.s.h.ok()
	return v, nil
}
