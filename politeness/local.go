package politeness

import (
	"context"
	"sync"
	"time"
)

// Defaults of LocalOptions.
const (
	DefaultBackoffPause = 5 * time.Second
	DefaultMaxBackoff   = 10 * time.Minute
	DefaultMaxEntries   = 100_000
)

// sweepEvery is how many new keys LocalScheduler adds between two sweeps
// of idle keys, so that memory follows the active keys, not the peak.
const sweepEvery = 4096

// maxStreak bounds the doubling exponent (2^20 times the default is past
// any cap).
const maxStreak = 20

// LocalOptions configure a LocalScheduler. Zero values mean the defaults.
type LocalOptions struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// DefaultBackoff is the pause after a 429 without Retry-After; it
	// doubles with each such answer until a success. Default 5s.
	DefaultBackoff time.Duration
	// MaxBackoff caps every pause, Retry-After included. Default 10m.
	MaxBackoff time.Duration
	// MaxEntries bounds the keys held. A key is dropped once it is idle:
	// its next start is free and its pause is over (a key with a back-off
	// streak is kept MaxBackoff longer, to double the next pause). When
	// every key is active, a new key gets ErrFull. Default 100000 (about
	// 20 MB).
	MaxEntries int
}

// LocalScheduler is a Scheduler that keeps its state in memory, for one
// proxy. It starts no goroutine: idle keys are swept while adding keys.
type LocalScheduler struct {
	o LocalOptions

	mu    sync.Mutex
	m     map[Key]*record
	added int // new keys since the last sweep
}

// record is the state of one key.
type record struct {
	free    time.Time // no slot before: last granted slot + its delay
	started time.Time // no start before: last recorded start + its delay
	pause   time.Time // no start before: end of the back-off pause
	streak  int       // 429s without Retry-After since the last success
}

// NewLocalScheduler returns an empty LocalScheduler.
func NewLocalScheduler(o LocalOptions) *LocalScheduler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DefaultBackoff <= 0 {
		o.DefaultBackoff = DefaultBackoffPause
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	return &LocalScheduler{o: o, m: make(map[Key]*record)}
}

// Len returns the number of keys held.
func (s *LocalScheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Reserve implements Scheduler.
func (s *LocalScheduler) Reserve(_ context.Context, key Key, delay, maxWait time.Duration) (Slot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	r := s.m[key]
	at, cause := now, Cause("")
	if r != nil {
		if r.free.After(at) {
			at, cause = r.free, CauseCrawlDelay
		}
		if r.pause.After(at) {
			at, cause = r.pause, CauseBackoff
		}
	}
	wait := at.Sub(now)
	if wait > maxWait {
		return Slot{Wait: wait, Cause: cause}, nil
	}
	if r == nil {
		if delay <= 0 {
			return Slot{Granted: true}, nil // nothing to remember
		}
		var err error
		if r, err = s.add(key, now); err != nil {
			return Slot{}, err
		}
	}
	r.free = at.Add(max(delay, 0))
	return Slot{Wait: wait, Granted: true, Cause: cause}, nil
}

// Start implements Scheduler.
func (s *LocalScheduler) Start(_ context.Context, key Key, delay time.Duration) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	r := s.m[key]
	if r == nil {
		if delay <= 0 {
			return 0, nil
		}
		var err error
		if r, err = s.add(key, now); err != nil {
			return 0, err
		}
	}
	if r.started.After(now) {
		return r.started.Sub(now), nil
	}
	r.started = now.Add(max(delay, 0))
	if r.started.After(r.free) {
		r.free = r.started // slots granted from now on follow this start
	}
	return 0, nil
}

// Pause implements Scheduler.
func (s *LocalScheduler) Pause(_ context.Context, key Key) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[key]; r != nil {
		return max(0, r.pause.Sub(s.o.Now())), nil
	}
	return 0, nil
}

// Backoff implements Scheduler: the pause is b.RetryAfter, or
// DefaultBackoff doubled for each earlier 429 without Retry-After since the
// last success; either is capped at MaxBackoff.
func (s *LocalScheduler) Backoff(_ context.Context, key Key, b Backoff) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	r := s.m[key]
	if r == nil {
		var err error
		if r, err = s.add(key, now); err != nil {
			return 0, err
		}
	}
	pause := b.RetryAfter
	if !b.HasRetryAfter {
		pause = s.o.DefaultBackoff << min(r.streak, maxStreak)
		r.streak = min(r.streak+1, maxStreak)
	}
	pause = min(max(pause, 0), s.o.MaxBackoff)
	if until := now.Add(pause); until.After(r.pause) {
		r.pause = until
	}
	return max(0, r.pause.Sub(now)), nil
}

// Succeeded implements Scheduler.
func (s *LocalScheduler) Succeeded(_ context.Context, key Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[key]; r != nil && !r.pause.After(s.o.Now()) {
		r.pause, r.streak = time.Time{}, 0
	}
	return nil
}

// add inserts a new key, sweeping idle keys every sweepEvery additions and
// whenever the map is full; s.mu is held.
func (s *LocalScheduler) add(key Key, now time.Time) (*record, error) {
	if s.added >= sweepEvery || len(s.m) >= s.o.MaxEntries {
		s.sweep(now)
	}
	if len(s.m) >= s.o.MaxEntries {
		return nil, ErrFull
	}
	s.added++
	r := &record{}
	s.m[key] = r
	return r, nil
}

// sweep drops idle keys; s.mu is held.
func (s *LocalScheduler) sweep(now time.Time) {
	s.added = 0
	for k, r := range s.m {
		if s.idle(r, now) {
			delete(s.m, k)
		}
	}
}

// idle reports whether dropping r changes no answer: its next slot and
// start are free, its pause over, and a streak old enough to forget.
func (s *LocalScheduler) idle(r *record, now time.Time) bool {
	end := r.free
	for _, t := range [...]time.Time{r.started, r.pause} {
		if t.After(end) {
			end = t
		}
	}
	if r.streak > 0 {
		end = end.Add(s.o.MaxBackoff)
	}
	return !end.After(now)
}
