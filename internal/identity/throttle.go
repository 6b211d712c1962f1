package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// ThrottleOptions limit failed Proxy-Authorization checks before bcrypt
// runs, and the bcrypt comparisons that run at once. The zero value
// throttles nothing and bounds nothing.
type ThrottleOptions struct {
	// FailuresPerMinute is the sustained rate of failed checks allowed per
	// client address and per user name (a token bucket each); 0 disables
	// throttling.
	FailuresPerMinute float64
	// Burst is how many failed checks a bucket allows at once (its size);
	// at least 1 when FailuresPerMinute is above 0.
	Burst int
	// MaxConcurrentChecks bounds the bcrypt comparisons running at once;
	// others wait for a slot or for their context to end. 0 means no bound.
	MaxConcurrentChecks int
}

func (o ThrottleOptions) validate() error {
	f := o.FailuresPerMinute
	switch {
	case f < 0 || math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("failures per minute: want a finite number >= 0, got %v", f)
	case f > 0 && o.Burst < 1:
		return fmt.Errorf("burst: want at least 1, got %d", o.Burst)
	case o.MaxConcurrentChecks < 0:
		return fmt.Errorf("max concurrent checks: want 0 (no bound) or more, got %d", o.MaxConcurrentChecks)
	}
	return nil
}

// throttleMaxKeys bounds the keys (client addresses and user names) a
// throttle tracks: about 300 bytes each, so 3 MB at most. Keys whose bucket
// has refilled are dropped as they reach the least-recent end; past the
// bound the least recently used key is forgotten (its bucket starts full
// again if it returns).
const throttleMaxKeys = 10000

// maxUserKey bounds the user names kept verbatim as keys; longer names are
// kept as their SHA-256.
const maxUserKey = 64

// throttle holds a token bucket (golang.org/x/time/rate) per client address
// and per user name. Only failed checks take tokens; a check is admitted
// only when every bucket it touches holds a token for it and for each check
// of that key still running, so concurrent attempts cannot overrun a
// bucket. Safe for concurrent use.
type throttle struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu   sync.Mutex
	keys *memo.LRU[string, *bucket] // at most throttleMaxKeys
}

type bucket struct {
	lim      *rate.Limiter
	inflight int // admitted checks not yet done
}

// newThrottle returns nil when o disables throttling.
func newThrottle(o ThrottleOptions, now func() time.Time) *throttle {
	if o.FailuresPerMinute == 0 {
		return nil
	}
	return &throttle{limit: rate.Limit(o.FailuresPerMinute / 60), burst: o.Burst, now: now,
		keys: memo.NewLRU[string, *bucket](throttleMaxKeys, 0, nil)}
}

// admit asks for one check by client and, when hasUser, by user. It returns
// done, to be called with whether the check failed, or the time until the
// emptier bucket allows a check. A nil throttle admits everything.
func (t *throttle) admit(client netip.Addr, user string, hasUser bool) (done func(failed bool), retry time.Duration) {
	if t == nil {
		return func(bool) {}, 0
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(now)
	bs := []*bucket{t.get(clientKey(client))}
	if hasUser {
		bs = append(bs, t.get(userKey(user)))
	}
	for _, b := range bs {
		retry = max(retry, b.wait(now, t.limit))
	}
	if retry > 0 {
		return nil, retry
	}
	for _, b := range bs {
		b.inflight++
	}
	return func(failed bool) { t.done(bs, failed) }, 0
}

func (t *throttle) done(bs []*bucket, failed bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range bs {
		b.inflight--
		if failed {
			b.lim.AllowN(now, 1)
		}
	}
}

// prune drops up to two refilled buckets from the least-recent end, so
// that the keys tracked are, in steady state, those with recent failures.
func (t *throttle) prune(now time.Time) {
	for range 2 {
		if k, b, ok := t.keys.Oldest(); ok && b.idle(now, t.burst) {
			t.keys.Remove(k)
		}
	}
}

// get returns key's bucket, made full if new, as the most recently used;
// past the bound it forgets the least recently used bucket (throttleMaxKeys
// >= 2, so
// never the one the same admit got before).
func (t *throttle) get(key string) *bucket {
	if b, ok := t.keys.Get(key); ok {
		return b
	}
	b := &bucket{lim: rate.NewLimiter(t.limit, t.burst)}
	t.keys.Add(key, b, nil)
	return b
}

// len returns the number of tracked keys.
func (t *throttle) len() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keys.Len()
}

// wait returns how long until b holds a token for one more check beyond
// those running, rounded up to the millisecond (less a nanosecond of float
// noise), 0 when it does now.
func (b *bucket) wait(now time.Time, limit rate.Limit) time.Duration {
	missing := float64(1+b.inflight) - b.lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	ms := math.Ceil(missing/float64(limit)*1e3 - 1e-6)
	return time.Duration(min(ms, float64(maxRetry/time.Millisecond))) * time.Millisecond
}

// maxRetry bounds the wait a bucket reports (a rate of 0.0001 per minute
// would otherwise overflow time.Duration).
const maxRetry = 365 * 24 * time.Hour

// idle reports whether b is as good as new: full, with nothing running.
func (b *bucket) idle(now time.Time, burst int) bool {
	return b.inflight == 0 && b.lim.TokensAt(now) >= float64(burst)
}

// clientKey keys a client by its address, IPv6 clients by their /64 (one
// host usually holds a whole /64). Unknown addresses share one key.
func clientKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return "a:unknown"
	case a.Is6():
		return "a:" + netip.PrefixFrom(a, 64).Masked().String()
	}
	return "a:" + a.String()
}

// userKey keys a user name, known or not (so that throttling tells nothing
// about which names exist).
func userKey(name string) string {
	if len(name) > maxUserKey {
		sum := sha256.Sum256([]byte(name))
		return "h:" + hex.EncodeToString(sum[:])
	}
	return "u:" + name
}

// compare runs bcrypt once the semaphore (if any) gives a slot, or returns
// the context's error when it ends first.
func (p *Pinner) compare(ctx context.Context, hash []byte, password string) (bool, error) {
	if p.checks != nil {
		if err := p.checks.Acquire(ctx, 1); err != nil {
			return false, fmt.Errorf("waiting for a password check slot: %w", err)
		}
		defer p.checks.Release(1)
	}
	return p.bcrypt(hash, []byte(password)) == nil, nil
}

// newChecks returns the semaphore bounding bcrypt comparisons, nil for no
// bound.
func newChecks(n int) *semaphore.Weighted {
	if n == 0 {
		return nil
	}
	return semaphore.NewWeighted(int64(n))
}
