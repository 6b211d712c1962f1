package fleet

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// Leases of the shared Gate: a lease lasts leaseTTL unless renewed every
// leaseTTL/3 while its request is in flight (see leases), so that the
// slots of a replica that dies come back within leaseTTL.
const (
	leaseTTL  = 30 * time.Second
	gatePoll  = 20 * time.Millisecond
	renewFrac = 3
)

// acquireScript: ARGV n, lease id, lease ms. Drops expired leases, then
// adds one when fewer than n are held. Returns 1 when added.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`)

// renewScript: ARGV lease id, lease ms. Extends a lease still held.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0`)

// Gate is a politeness.Gate whose in-flight slots are leases in the shared
// store, so that politeness.max_concurrent_per_host holds for the whole
// fleet. Waiting polls every 20 ms (not first come, first served across
// replicas). While the store is unreachable, slots come from the local
// fallback gate.
type Gate struct {
	s        *Store
	n        int
	fallback politeness.Gate
}

// Gate returns a shared Gate of n slots per authority that falls back to
// fallback; on a nil Store it returns fallback itself.
func (s *Store) Gate(n int, fallback politeness.Gate) politeness.Gate {
	if s == nil {
		return fallback
	}
	return &Gate{s: s, n: max(n, 1), fallback: fallback}
}

// Acquire implements politeness.Gate.
func (g *Gate) Acquire(ctx context.Context, authority string, wait bool) (func(), error) {
	key, id := g.s.gateKey(authority), newToken()
	for {
		v, ok := g.s.run(ctx, acquireScript, key, g.n, id, leaseTTL.Milliseconds())
		if !ok {
			if err := callerGone(ctx); err != nil { // the caller gave up: no slot, local or shared
				return nil, err
			}
			return g.fallback.Acquire(ctx, authority, wait)
		}
		if got, _ := v.(int64); got == 1 {
			return g.hold(key, id, ""), nil
		}
		if !wait {
			return nil, politeness.ErrBusy
		}
		if err := sleep(ctx, gatePoll); err != nil {
			return nil, context.Cause(ctx)
		}
	}
}

// hold renews the lease until the returned release is called, which
// removes it with the next batch sent off the requests' path (see later),
// in one script with the other writes of pace, the politeness key of the
// request that holds it ("" for none).
func (g *Gate) hold(key, id, pace string) func() {
	g.s.leases.add(key, id)
	var released atomic.Bool
	return func() {
		if released.CompareAndSwap(false, true) {
			g.s.leases.remove(key, id)
			g.s.later.send(laterOp{gate: key, lease: id, pace: pace}) // off the response's path
		}
	}
}
