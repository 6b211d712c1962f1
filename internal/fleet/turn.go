package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// turnScript is Reserve, Gate.Acquire without waiting and Start in one
// script, for an allowed request's one round trip. KEYS: the pace key,
// the gate key (one hash tag, one cluster slot). ARGV: delay, maxWait,
// maxBackoff (microseconds), n (the gate's slots, 0 for no gate), lease
// id, lease ms, claim lease (microseconds), claim id. Returns {granted
// (0/1), wait, cause, slot taken (0/1), started (0/1)}. The in-flight
// slot is tried and the turn claimed only when the start is granted with
// no wait; the turn only when the slot was taken, no claim is held and
// the send recorded before is past (as Start). What it writes is what the
// three calls write.
var turnScript = redis.NewScript(paceLib + claimLib + `
local delay, maxWait, n = math.max(tonumber(ARGV[1]), 0), tonumber(ARGV[2]), tonumber(ARGV[4])
local at, cause = now, ''
if f > at then at, cause = f, 'crawl-delay' end
if p > at then at, cause = p, 'backoff' end
local wait = at - now
if wait > maxWait then return {0, wait, cause, 0, 0} end
local slot, started = 0, 0
f = at + delay
if wait == 0 then
  if n > 0 then
    local ms = math.floor(now / 1000)
    local lease = tonumber(ARGV[6])
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms)
    if redis.call('ZCARD', KEYS[2]) < n then
      redis.call('ZADD', KEYS[2], ms + lease, ARGV[5])
      redis.call('PEXPIRE', KEYS[2], lease)
      slot = 1
    end
  end
  if (n == 0 or slot == 1) and (delay == 0 or (s <= now and h <= now)) then
    started = 1
    if delay > 0 then claim(delay, tonumber(ARGV[7]), ARGV[8]) end
  end
end
if exists or delay > 0 then save(tonumber(ARGV[3])) end
return {1, wait, cause, slot, started}`)

// Turn implements politeness.Turnstile: one script on the store. gate
// must be nil or a Gate of the same Store (else politeness.ErrNoTurn).
// While the store is unreachable, or when it fails the script, it returns
// politeness.ErrNoTurn, and the Limiter's separate calls fall back.
func (sc *Scheduler) Turn(ctx context.Context, key politeness.Key, delay, maxWait, lease time.Duration, gate politeness.Gate) (politeness.Turn, error) {
	if !sc.s.h.isUp() {
		return politeness.Turn{}, politeness.ErrNoTurn // the separate calls probe and fall back
	}
	n, id := 0, ""
	var g *Gate
	if gate != nil {
		var ok bool
		if g, ok = gate.(*Gate); !ok || g.s != sc.s {
			return politeness.Turn{}, politeness.ErrNoTurn
		}
		n, id = g.n, newToken()
	}
	gateKey := sc.s.gateKey(key.Authority)
	claim := newClaimID()
	v, ok := sc.s.runKeys(ctx, turnScript, []string{sc.paceKey(key), gateKey},
		us(delay), us(maxWait), us(sc.o.MaxBackoff), n, id, leaseTTL.Milliseconds(), us(lease), claimArg(claim))
	if !ok {
		sc.orphan(key, claim, delay, lease)
		return politeness.Turn{}, politeness.ErrNoTurn
	}
	reply, isList := v.([]any)
	if !isList || len(reply) != 5 {
		return politeness.Turn{}, fmt.Errorf("politeness turn script: unexpected reply %v", v)
	}
	granted, _ := reply[0].(int64)
	wait, err := dur(reply[1])
	if err != nil {
		return politeness.Turn{}, err
	}
	cause, _ := reply[2].(string)
	slot, _ := reply[3].(int64)
	started, _ := reply[4].(int64)
	t := politeness.Turn{Slot: politeness.Slot{Wait: wait, Granted: granted == 1, Cause: politeness.Cause(cause)},
		Started: started == 1}
	if t.Started && delay > 0 && lease > 0 {
		t.ID = claim
	}
	if slot == 1 {
		t.Release = g.hold(gateKey, id, sc.paceKey(key))
	}
	return t, nil
}

// SucceededLater implements politeness.Turnstile: Succeeded goes to the
// store with the next batch sent off the requests' path (in one script
// with the request's claim end and release); while the store is
// unreachable, to the local fallback at once.
func (sc *Scheduler) SucceededLater(key politeness.Key) {
	if !sc.s.h.isUp() {
		_ = sc.fallback.Succeeded(context.Background(), key)
		return
	}
	sc.s.later.send(laterOp{pace: sc.paceKey(key), succeeded: true, maxBackoff: sc.o.MaxBackoff})
}
