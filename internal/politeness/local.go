package politeness

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Defaults of LocalOptions (rules.DefaultBackoffPause,
// rules.DefaultMaxBackoff, rules.DefaultPolitenessKeys).
const (
	DefaultBackoffPause = rules.DefaultBackoffPause
	DefaultMaxBackoff   = rules.DefaultMaxBackoff
	DefaultMaxEntries   = rules.DefaultPolitenessKeys
)

// expireStep bounds the records a new key looks at for idle keys while
// there is room for it: more than the one it adds, so that the idle keys
// go, and no request pays for many at once.
const expireStep = 8

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
	// MaxEntries bounds the keys held. A key is dropped once it is idle
	// (by the next new key): its next start is free and its pause is over
	// (a key with a back-off streak is kept MaxBackoff longer, to double
	// the next pause). When every key is active, a new key gets ErrFull.
	// Default 100000 (about 25 MB).
	MaxEntries int
}

// LocalScheduler is a Scheduler that keeps its state in memory, for one
// proxy. It starts no goroutine: each new key first drops keys gone idle,
// found in a queue ordered by when they may be, so that no request looks at
// every key (a new key costs O(log n) amortized, n the keys held).
type LocalScheduler struct {
	o LocalOptions

	mu     sync.Mutex
	m      map[Key]*record
	q      expiry // every record of m
	ids    uint64 // the last claim id given
	looked int    // records looked at for idle keys, for the tests
}

// record is the state of one key.
type record struct {
	free    time.Time // no slot before: last granted slot + its delay
	started time.Time // no start before: last recorded start + its delay
	pause   time.Time // no start before: end of the back-off pause
	streak  int       // 429s without Retry-After since the last success
	hold    time.Time // the claim held ends (its lease); zero when none
	claim   uint64    // the last claim's id

	key   Key       // its key in m
	at    time.Time // its place in q, never after end(r)
	index int       // its index in q
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
	s.kept(r)
	return Slot{Wait: wait, Granted: true, Cause: cause}, nil
}

// Start implements Scheduler.
func (s *LocalScheduler) Start(_ context.Context, key Key, delay, lease time.Duration) (Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	r := s.m[key]
	if r == nil {
		if delay <= 0 {
			return Claim{}, nil
		}
		var err error
		if r, err = s.add(key, now); err != nil {
			return Claim{}, err
		}
	}
	delay = max(delay, 0)
	if r.hold.After(now) {
		return Claim{Wait: max(delay, time.Nanosecond), Held: true}, nil
	}
	if r.started.After(now) {
		return Claim{Wait: r.started.Sub(now)}, nil
	}
	c := Claim{}
	r.started = now.Add(delay)
	if r.started.After(r.free) {
		r.free = r.started // slots granted from now on follow this start
	}
	if lease > 0 {
		// Held: sent at the latest when the lease ends.
		s.ids++
		r.claim, c.ID = s.ids, s.ids
		r.hold = now.Add(lease)
		r.started = r.hold.Add(delay)
	}
	s.kept(r)
	return c, nil
}

// Sent implements Scheduler.
func (s *LocalScheduler) Sent(_ context.Context, key Key, id uint64, delay, ago time.Duration, sent bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[key]
	if r == nil || r.hold.IsZero() || r.claim != id {
		return nil // ended, or another claim followed when its lease ran out
	}
	now := s.o.Now()
	r.hold = time.Time{}
	r.started = now // nothing sent: no spacing after it
	if sent {
		r.started = now.Add(max(delay, 0) - max(ago, 0))
		if r.started.After(r.free) {
			r.free = r.started
		}
	}
	s.kept(r)
	return nil
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
	s.kept(r)
	return max(0, r.pause.Sub(now)), nil
}

// Succeeded implements Scheduler.
func (s *LocalScheduler) Succeeded(_ context.Context, key Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[key]; r != nil && !r.pause.After(s.o.Now()) {
		r.pause, r.streak = time.Time{}, 0
		s.kept(r) // without its streak, r may end earlier
	}
	return nil
}

// add inserts a new key after dropping the idle ones; s.mu is held. The
// caller sets the record, then calls kept.
func (s *LocalScheduler) add(key Key, now time.Time) (*record, error) {
	s.expire(now)
	if len(s.m) >= s.o.MaxEntries {
		return nil, ErrFull
	}
	r := &record{key: key, index: -1}
	s.m[key] = r
	return r, nil
}

// expire drops keys idle at now: up to expireStep of them when there is
// room, else until one is dropped; s.mu is held. It looks only at records
// q puts before now: each is dropped, or put back at its end, which a
// request moved on since it was queued (that request pays for the look).
func (s *LocalScheduler) expire(now time.Time) {
	for n := 0; len(s.q) > 0 && !s.q[0].at.After(now); n++ {
		if n >= expireStep && len(s.m) < s.o.MaxEntries {
			return
		}
		s.looked++
		r := s.q[0]
		if end := s.end(r); end.After(now) {
			r.at = end
			heap.Fix(&s.q, 0)
			continue
		}
		heap.Pop(&s.q)
		delete(s.m, r.key)
	}
}

// kept queues r after a change to it; s.mu is held. A change that moves
// r's end later leaves r where it is (expire moves it when it comes up);
// a new record, or one whose streak was cleared, is put at its end.
func (s *LocalScheduler) kept(r *record) {
	end := s.end(r)
	switch {
	case r.index < 0:
		r.at = end
		heap.Push(&s.q, r)
	case end.Before(r.at):
		r.at = end
		heap.Fix(&s.q, r.index)
	}
}

// end is the time from which dropping r changes no answer: its next slot
// and start are free, its pause over, and a streak old enough to forget.
func (s *LocalScheduler) end(r *record) time.Time {
	end := r.free
	for _, t := range [...]time.Time{r.started, r.pause, r.hold} {
		if t.After(end) {
			end = t
		}
	}
	if r.streak > 0 {
		end = end.Add(s.o.MaxBackoff)
	}
	return end
}
