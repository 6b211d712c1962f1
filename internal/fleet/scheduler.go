package fleet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// SchedulerOptions configure Store.Scheduler. Zero values mean the
// politeness package's defaults.
type SchedulerOptions struct {
	// DefaultBackoff is the pause after a 429 without Retry-After,
	// doubled for each such answer until a success
	// (politeness.default_backoff). Default 5s.
	DefaultBackoff time.Duration
	// MaxBackoff caps every pause (politeness.max_backoff). Default 10m.
	MaxBackoff time.Duration
}

// Scheduler is a politeness.Scheduler whose state is in the shared store,
// so that the replicas of a fleet space their requests together: three
// replicas honour one Crawl-delay. Each call is one Lua script on the
// store's clock. While the store is unreachable, calls go to the local
// fallback scheduler (the replica spaces its own requests only).
// Unlike LocalScheduler it never returns politeness.ErrFull: keys expire
// when idle.
type Scheduler struct {
	s        *Store
	o        SchedulerOptions
	fallback politeness.Scheduler
}

// Scheduler returns a shared Scheduler that falls back to fallback; on a
// nil Store it returns fallback itself.
func (s *Store) Scheduler(fallback politeness.Scheduler, o SchedulerOptions) politeness.Scheduler {
	if s == nil {
		return fallback
	}
	if o.DefaultBackoff <= 0 {
		o.DefaultBackoff = politeness.DefaultBackoffPause
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = politeness.DefaultMaxBackoff
	}
	return &Scheduler{s: s, o: o, fallback: fallback}
}

// paceKey is the store key of a politeness key. The authority is its
// hash tag (see Store.gateKey).
func (sc *Scheduler) paceKey(k politeness.Key) string {
	return sc.s.key("pace", "{"+k.Authority+"} "+k.Token)
}

// run runs a politeness script on the store key; ok is false when the
// caller must use its local fallback (the store is down or failed; both
// counted as a politeness fallback), or when ctx ended first: the caller
// gave up (a client gone), which says nothing of the store and is
// neither counted nor taken for its failure.
func (s *Store) run(ctx context.Context, script *redis.Script, key string, args ...any) (any, bool) {
	return s.runKeys(ctx, script, []string{key}, args...)
}

// runKeys is run with several keys.
func (s *Store) runKeys(ctx context.Context, script *redis.Script, keys []string, args ...any) (any, bool) {
	if !s.h.usable() {
		s.m.fallbacks.WithLabelValues(fallbackPoliteness).Inc()
		return nil, false
	}
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	v, err := script.Run(cctx, s.rdb, keys, args...).Result()
	if err != nil {
		if callerGone(ctx) != nil {
			return nil, false
		}
		s.h.failed(opPoliteness, err)
		s.m.fallbacks.WithLabelValues(fallbackPoliteness).Inc()
		return nil, false
	}
	s.h.ok()
	return v, true
}

// failed records err of operation op (see health.failed), unless the
// caller's ctx has ended (callerGone): a crawler that disconnects says
// nothing of the store, and must not turn the replica's robots.txt
// sharing and politeness local.
func (s *Store) failed(ctx context.Context, op string, err error) {
	if callerGone(ctx) != nil {
		return
	}
	s.h.failed(op, err)
}

// callerGone returns ctx's error once ctx has ended, or
// context.DeadlineExceeded once its deadline has passed: the store's
// client times its socket out at that deadline, which may come back before
// the context's own timer has ended it. nil while the caller still waits.
func callerGone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// run runs a politeness script for key (see Store.run).
func (sc *Scheduler) run(ctx context.Context, script *redis.Script, key politeness.Key, args ...any) (any, bool) {
	return sc.s.run(ctx, script, sc.paceKey(key), args...)
}

// us returns d in microseconds.
func us(d time.Duration) int64 { return d.Microseconds() }

// dur converts a script's integer reply in microseconds. A reply that is
// negative or larger than the largest time.Duration is an error (the
// Limiter refuses the request), never a wrapped duration.
func dur(v any) (time.Duration, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("politeness script: want an integer, got %T", v)
	}
	if n < 0 || n > math.MaxInt64/int64(time.Microsecond) {
		return 0, fmt.Errorf("politeness script: %d microseconds is out of range", n)
	}
	return time.Duration(n) * time.Microsecond, nil
}

// Reserve implements politeness.Scheduler.
func (sc *Scheduler) Reserve(ctx context.Context, key politeness.Key, delay, maxWait time.Duration) (politeness.Slot, error) {
	v, ok := sc.run(ctx, reserveScript, key, us(delay), us(maxWait), us(sc.o.MaxBackoff))
	if !ok {
		return sc.fallback.Reserve(ctx, key, delay, maxWait)
	}
	reply, isList := v.([]any)
	if !isList || len(reply) != 3 {
		return politeness.Slot{}, fmt.Errorf("politeness reserve script: unexpected reply %v", v)
	}
	granted, _ := reply[0].(int64)
	wait, err := dur(reply[1])
	if err != nil {
		return politeness.Slot{}, err
	}
	cause, _ := reply[2].(string)
	return politeness.Slot{Wait: wait, Granted: granted == 1, Cause: politeness.Cause(cause)}, nil
}

// Start implements politeness.Scheduler. Its claim ids have the top bit
// set; the local fallback's never do, so Sent finds where a claim is.
func (sc *Scheduler) Start(ctx context.Context, key politeness.Key, delay, lease time.Duration) (politeness.Claim, error) {
	id := newClaimID()
	v, ok := sc.run(ctx, startScript, key, us(delay), us(sc.o.MaxBackoff), us(lease), claimArg(id))
	if !ok {
		sc.orphan(key, id, delay, lease)
		return sc.fallback.Start(ctx, key, delay, lease)
	}
	reply, isList := v.([]any)
	if !isList || len(reply) != 3 {
		return politeness.Claim{}, fmt.Errorf("politeness start script: unexpected reply %v", v)
	}
	claimed, _ := reply[0].(int64)
	wait, err := dur(reply[1])
	if err != nil {
		return politeness.Claim{}, err
	}
	held, _ := reply[2].(int64)
	c := politeness.Claim{Wait: wait, Held: held == 1}
	if claimed == 1 {
		c.Wait = 0
		if delay > 0 && lease > 0 {
			c.ID = id
		}
	}
	return c, nil
}

// Sent implements politeness.Scheduler: off the request's path, with the
// next batch, in one script with the request's success and release (see
// later); ago counts to when that batch is sent. A claim of the local
// fallback goes to it at once. A Sent the store never gets leaves the
// claim to end with its lease.
func (sc *Scheduler) Sent(ctx context.Context, key politeness.Key, id uint64, delay, ago time.Duration, sent bool) error {
	if id&fleetClaim == 0 {
		return sc.fallback.Sent(ctx, key, id, delay, ago, sent)
	}
	sc.s.later.send(laterOp{pace: sc.paceKey(key), maxBackoff: sc.o.MaxBackoff,
		paced: &sentOp{id: claimArg(id), delay: delay, at: time.Now().Add(-ago), wrote: sent}})
	return nil
}

// orphan ends, off the path, claim id of key that a script that failed
// may have made all the same (it timed out on the replica after the store
// ran it): else the fleet would wait for its lease. A claim that was not
// made is left alone (endScript checks the id).
func (sc *Scheduler) orphan(key politeness.Key, id uint64, delay, lease time.Duration) {
	if delay > 0 && lease > 0 {
		sc.s.later.send(laterOp{pace: sc.paceKey(key), maxBackoff: sc.o.MaxBackoff,
			paced: &sentOp{id: claimArg(id), delay: delay, at: time.Now()}})
	}
}

// fleetClaim marks the claim ids of the store (Scheduler.Start).
const fleetClaim = 1 << 63

// newClaimID returns a random claim id with fleetClaim set.
func newClaimID() uint64 { return rand.Uint64() | fleetClaim }

// claimArg is a claim id as the scripts keep it.
func claimArg(id uint64) string { return strconv.FormatUint(id, 10) }

// Pause implements politeness.Scheduler.
func (sc *Scheduler) Pause(ctx context.Context, key politeness.Key) (time.Duration, error) {
	v, ok := sc.run(ctx, pauseScript, key)
	if !ok {
		return sc.fallback.Pause(ctx, key)
	}
	return dur(v)
}

// Backoff implements politeness.Scheduler.
func (sc *Scheduler) Backoff(ctx context.Context, key politeness.Key, b politeness.Backoff) (time.Duration, error) {
	has := 0
	if b.HasRetryAfter {
		has = 1
	}
	v, ok := sc.run(ctx, backoffScript, key, us(b.RetryAfter), has, us(sc.o.DefaultBackoff), us(sc.o.MaxBackoff))
	if !ok {
		return sc.fallback.Backoff(ctx, key, b)
	}
	return dur(v)
}

// Succeeded implements politeness.Scheduler.
func (sc *Scheduler) Succeeded(ctx context.Context, key politeness.Key) error {
	if _, ok := sc.run(ctx, endScript, key, "", 0, 0, 0, us(sc.o.MaxBackoff), 1); !ok {
		return sc.fallback.Succeeded(ctx, key)
	}
	return nil
}
