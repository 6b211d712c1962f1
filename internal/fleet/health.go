package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Backoff of the recovery probes while the store is down: the first retry
// after minRetry, doubling up to maxRetry.
const (
	minRetry = 250 * time.Millisecond
	maxRetry = 5 * time.Second
	// probeEvery bounds how often Ready pings a store that is up.
	probeEvery = time.Second
	// refusedLogEvery bounds the logging of error replies (a store out
	// of memory refuses every write).
	refusedLogEvery = time.Minute
)

// health tracks whether the store answers. While it is down, operations
// go local without trying it, except one probe each time the backoff
// expires. Safe for concurrent use.
type health struct {
	log     zerolog.Logger
	now     func() time.Time
	m       *metrics
	target  string // the redacted URL, for logs
	ping    func(ctx context.Context) error
	timeout time.Duration

	// upNow mirrors up for the checks of every operation, which read it
	// without taking mu; it is written with up, under mu.
	upNow atomic.Bool

	mu      sync.Mutex
	up      bool
	since   time.Time     // when up last changed
	retryAt time.Time     // while down: when the next probe may go
	backoff time.Duration // while down: the wait after the next failure
	probed  time.Time     // when Ready last pinged
	// refusedLog is when an error reply was last logged.
	refusedLog time.Time
	lastErr    string // while down: why
}

// usable reports whether an operation may try the store now: while it is
// up, or when the backoff has expired (then the caller is the one probe
// until the next expiry).
func (h *health) usable() bool {
	if h.upNow.Load() {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up {
		return true
	}
	now := h.now()
	if now.Before(h.retryAt) {
		return false
	}
	h.retryAt = now.Add(h.backoff)
	return true
}

// ok records an answer from the store; it logs the recovery once.
func (h *health) ok() {
	if h.upNow.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up {
		return
	}
	h.up, h.since, h.lastErr = true, h.now(), ""
	h.upNow.Store(true)
	h.m.up.Set(1)
	h.log.Info().Str("redis_url", h.target).Msg("shared store reachable: robots.txt results and politeness state are shared again")
}

// failed records an error of operation op. Errors the store answered
// (a Redis error reply) are counted, and the operation falls back, but
// the store stays up; anything else (network, timeout) marks it down,
// logged once.
func (h *health) failed(op string, err error) {
	h.m.errors.WithLabelValues(op).Inc()
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var reply redis.Error
	if errors.As(err, &reply) && !errors.Is(err, redis.ErrClosed) {
		if now.Sub(h.refusedLog) >= refusedLogEvery {
			h.refusedLog = now
			h.log.Warn().Err(err).Str("op", op).
				Msg("shared store refused an operation: done locally (logged at most once a minute; see robotsproxy_shared_errors_total)")
		}
		return
	}
	if h.up {
		h.up, h.since, h.backoff = false, now, minRetry
		h.upNow.Store(false)
		h.m.up.Set(0)
		h.log.Warn().Err(err).Str("redis_url", h.target).Str("op", op).
			Msg("shared store unreachable: robots.txt fetching and politeness fall back to this replica's own state until it answers again")
	} else {
		h.backoff = min(2*h.backoff, maxRetry)
	}
	h.lastErr = err.Error()
	h.retryAt = now.Add(h.backoff)
}

// check answers a readiness probe: ready is always true (the replica
// works without the store); reason is "" while the store is up, else why
// it is degraded. It pings the store at most once per probeEvery while
// up, and when the backoff has expired while down.
func (h *health) check() (ready bool, reason string) {
	h.mu.Lock()
	due := h.now().Sub(h.probed) >= probeEvery
	if due {
		h.probed = h.now()
	}
	h.mu.Unlock()
	if due && h.usable() {
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
		err := h.ping(ctx)
		cancel()
		if err != nil {
			h.failed(opPing, err)
		} else {
			h.ok()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up {
		return true, ""
	}
	return true, "shared store unreachable since " + h.since.UTC().Format(time.RFC3339) +
		" (" + h.lastErr + "): robots.txt fetching and politeness are local to this replica"
}

// isUp reports whether the store is up.
func (h *health) isUp() bool { return h.upNow.Load() }
