package politeness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Defaults of Options (rules.DefaultMaxCrawlDelay, rules.DefaultMaxWait:
// the defaults of politeness.max_crawl_delay and politeness.max_wait).
const (
	DefaultMaxCrawlDelay = rules.DefaultMaxCrawlDelay
	DefaultMaxWait       = rules.DefaultMaxWait
	// DefaultSendWithin bounds how long an admitted request may take to
	// be sent (Options.SendWithin).
	DefaultSendWithin = 30 * time.Second
	// busyRetryAfter is the Retry-After of a request refused for the
	// in-flight cap: when a slot frees up is unknown.
	busyRetryAfter = time.Second
	// maxRounds bounds the reservations of one request (each one after a
	// back-off that began while it waited).
	maxRounds = 64
	// heldPoll is how often a request asks again for a turn another
	// request holds (claimed, not yet sent).
	heldPoll = 5 * time.Millisecond
)

// Options configure a Limiter. Zero values mean the defaults.
type Options struct {
	// CrawlDelay enforces robots.txt crawl delays (politeness.crawl_delay:
	// enforce): the requests of one Key start at least the delay apart.
	CrawlDelay bool
	// MaxCrawlDelay caps a robots.txt crawl delay. Default 30s.
	MaxCrawlDelay time.Duration
	// DefaultDelay is the crawl delay when robots.txt gives none for the
	// token (or was not read). Default 0.
	DefaultDelay time.Duration
	// Reject refuses a request that comes too early at once, with the time
	// until its slot as Retry-After (on_early: reject). The default holds
	// it until its slot, for at most MaxWait (on_early: wait).
	Reject bool
	// MaxWait bounds how long a request is held in total; one whose slot
	// is further off is refused at once. Default 60s.
	MaxWait time.Duration
	// Backoff pauses a Key after the origin answers 429, or 503 with
	// Retry-After (politeness.backoff: enforce).
	Backoff bool
	// MaxConcurrentPerHost caps the requests in flight per authority, all
	// tokens together; 0 means no cap.
	MaxConcurrentPerHost int
	// Scheduler keeps the spacing and back-off state. Default a
	// LocalScheduler with its defaults.
	Scheduler Scheduler
	// Gate caps the requests in flight. Default a LocalGate of
	// MaxConcurrentPerHost when that is above 0; unused otherwise.
	Gate Gate
	// CountFromSend counts a crawl-delay turn from the moment the request
	// is sent, not from its admission: the caller reports that moment
	// (Ticket.Sending and Ticket.Wrote, see Ticket.Paced), and until then
	// the key's next request is held. Without it a request counts as sent
	// when Admit returns.
	CountFromSend bool
	// SendWithin bounds, with CountFromSend, how long an admitted request
	// may take until its first octet is written (connecting to the origin
	// included): a request not sent by then is not sent at all
	// (ErrTurnLost), and a turn never reported ends then. Default 30s.
	SendWithin time.Duration
	// Observer is told of every wait and refusal; nil tells no one.
	Observer Observer
	// Now is the clock that measures waits; default time.Now.
	Now func() time.Time
	// Sleep waits for d or until ctx ends (then it returns the context's
	// cause); default a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Observer receives the Limiter's waits and refusals, for metrics.
type Observer interface {
	// Waited is called once per cause a request waited for, with how long.
	Waited(cause Cause, d time.Duration)
	// Rejected is called for each refused request, with its cause.
	Rejected(cause Cause)
}

// Limiter admits requests under Options. It is safe for concurrent use and
// starts no goroutine. A nil *Limiter admits every request at once.
type Limiter struct {
	o Options
}

// New returns a Limiter.
func New(o Options) *Limiter {
	if o.MaxCrawlDelay <= 0 {
		o.MaxCrawlDelay = DefaultMaxCrawlDelay
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Scheduler == nil {
		o.Scheduler = NewLocalScheduler(LocalOptions{Now: o.Now})
	}
	if o.Gate == nil && o.MaxConcurrentPerHost > 0 {
		o.Gate = NewLocalGate(o.MaxConcurrentPerHost)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SendWithin <= 0 {
		o.SendWithin = DefaultSendWithin
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return &Limiter{o: o}
}

// Request is what the Limiter needs to know about one request:
// policy.PolitenessRequest. Its Delay is capped at MaxCrawlDelay; without
// one (HasDelay false) DefaultDelay applies.
type Request = policy.PolitenessRequest

// Ticket is the Limiter's answer for one request. Refused says whether it
// may go ahead; when it does, the caller reports the origin's answer with
// Observe and calls Release when the response is done. It is a
// policy.Ticket (see Limiter.Politeness).
type Ticket struct {
	// Admission is what the Limiter did: how long the request waited and
	// why, or why it was refused.
	policy.Admission

	key       Key
	l         *Limiter   // set when Paced
	send      *sendState // the claim and sends, when Paced
	longest   time.Duration
	scheduled bool // the Scheduler was asked, so it hears the answer
	held      bool // the request waited (slept or queued), even for 0s
	release   func()
}

// Answer returns t's Admission; nil for a nil t.
func (t *Ticket) Answer() *policy.Admission {
	if t == nil {
		return nil
	}
	return &t.Admission
}

// Politeness returns l as the politeness step of a policy
// (policy.Options.Politeness), nil when l is nil: the policy then admits
// every request at once.
func (l *Limiter) Politeness() policy.Politeness {
	if l == nil {
		return nil
	}
	return step{l}
}

// step is a Limiter as a policy.Politeness.
type step struct{ l *Limiter }

// Admit implements policy.Politeness.
func (s step) Admit(ctx context.Context, r policy.PolitenessRequest) policy.Ticket {
	return s.l.Admit(ctx, r)
}

// Observe implements policy.Politeness; t is a *Ticket the Limiter gave.
func (s step) Observe(ctx context.Context, t policy.Ticket, status int, retryAfter, date string) error {
	tk, _ := t.(*Ticket)
	return s.l.Observe(ctx, tk, status, retryAfter, date)
}

// Release gives back the request's in-flight slot and ends its turn
// (Paced: a turn claimed and never sent is given back); it may be called
// more than once, and on a nil Ticket. Call it once the request is over.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	t.send.release(t)
	t.releaseGate()
}

// releaseGate gives back the request's in-flight slot.
func (t *Ticket) releaseGate() {
	if t.release != nil {
		t.release()
	}
}

// Admit holds the request until it may start, or refuses it. It never
// returns nil.
//
// A request reserves a slot (first come, first served) and sleeps until
// it; takes an in-flight slot when there is a cap; then claims its turn,
// when its key is not paused, no other claim is held and the send
// recorded before it is the delay ago (a request that woke up late for
// its slot is not followed closely). A
// back-off that began while it waited sends it round again: requests wake
// in the order of their slots, so they queue again in that order.
func (l *Limiter) Admit(ctx context.Context, r Request) *Ticket {
	t := &Ticket{key: r.Key}
	if l == nil {
		return t
	}
	deadline := l.o.Now().Add(l.o.MaxWait)
	t.Delay = l.delay(r)
	scheduled := t.Delay > 0 || l.o.Backoff
	t.scheduled = scheduled
	for range maxRounds {
		startedNow := false
		if scheduled {
			var ok bool
			if startedNow, ok = l.reserve(ctx, t, deadline); !ok {
				return t
			}
		}
		if l.o.Gate != nil && t.release == nil && !l.acquire(ctx, t, deadline) {
			return t
		}
		if !scheduled || startedNow {
			return t
		}
		started, again := l.start(ctx, t, deadline)
		if started {
			return t
		}
		t.releaseGate()
		t.release = nil
		if !again {
			return t
		}
	}
	l.refuse(t, CauseBackoff, busyRetryAfter, errors.New("politeness: paused again at every slot"))
	return t
}

// delay is the crawl delay that applies to r.
func (l *Limiter) delay(r Request) time.Duration {
	switch {
	case !l.o.CrawlDelay:
		return 0
	case !r.HasDelay:
		return l.o.DefaultDelay
	}
	return min(max(r.Delay, 0), l.o.MaxCrawlDelay)
}

// reserve reserves the request's slot and sleeps until it. ok reports
// whether the request was not refused. With a Turnstile, one call may
// also take the in-flight slot (t.release) and record the start
// (started): then the request goes ahead at once.
func (l *Limiter) reserve(ctx context.Context, t *Ticket, deadline time.Time) (started, ok bool) {
	maxWait := time.Duration(0)
	if !l.o.Reject {
		maxWait = max(0, deadline.Sub(l.o.Now()))
	}
	slot, err := Slot{}, ErrNoTurn
	if ts, isTurnstile := l.o.Scheduler.(Turnstile); isTurnstile {
		var turn Turn
		before := l.o.Now()
		if turn, err = ts.Turn(ctx, t.key, t.Delay, maxWait, l.lease(), l.o.Gate); err == nil {
			slot, t.release, started = turn.Slot, turn.Release, turn.Started
			if started {
				l.claimed(ctx, t, turn.ID, before)
			}
		}
	}
	if errors.Is(err, ErrNoTurn) {
		slot, err = l.o.Scheduler.Reserve(ctx, t.key, t.Delay, maxWait)
	}
	switch {
	case err != nil:
		return false, l.refuse(t, CauseCrawlDelay, busyRetryAfter, fmt.Errorf("politeness: reserve a start: %w", err))
	case !slot.Granted:
		t.releaseGate()
		t.release = nil
		return false, l.refuse(t, slot.Cause, slot.Wait, nil)
	case slot.Wait <= 0:
		return started, true
	}
	return false, l.wait(ctx, t, slot.Cause, func(ctx context.Context) error { return l.o.Sleep(ctx, slot.Wait) })
}

// acquire takes an in-flight slot for the request, waiting for one unless
// on_early is reject. It reports whether the request was not refused.
func (l *Limiter) acquire(ctx context.Context, t *Ticket, deadline time.Time) bool {
	rel, err := l.o.Gate.Acquire(ctx, t.key.Authority, false)
	if err == nil {
		t.release = rel
		return true
	}
	if !errors.Is(err, ErrBusy) {
		return l.refuse(t, CauseConcurrency, busyRetryAfter, fmt.Errorf("politeness: take an in-flight slot: %w", err))
	}
	if l.o.Reject {
		return l.refuse(t, CauseConcurrency, busyRetryAfter, nil)
	}
	return l.wait(ctx, t, CauseConcurrency, func(ctx context.Context) error {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		rel, err := l.o.Gate.Acquire(wctx, t.key.Authority, true)
		if err != nil && ctx.Err() == nil {
			return errMaxWait
		}
		t.release = rel
		return err
	})
}

// start claims the request's turn (Scheduler.Start), waiting out the rest
// of the previous send's delay, and a claim another request holds. It
// ends once the turn is claimed or the deadline is passed (each wait is
// above 0). again is true when the key is
// paused: the request must reserve a slot again.
//
// A request that was never held reads no pause: Reserve has just granted
// it a start at once, so its key was not paused then, and a pause that
// began since is like one that begins just after the read, which lets the
// request go ahead too. That saves a shared store's round trip.
func (l *Limiter) start(ctx context.Context, t *Ticket, deadline time.Time) (started, again bool) {
	if l.o.Backoff && t.held {
		if pause, err := l.o.Scheduler.Pause(ctx, t.key); err != nil {
			return l.refuse(t, CauseBackoff, busyRetryAfter, fmt.Errorf("politeness: read the pause: %w", err)), false
		} else if pause > 0 {
			return false, true
		}
	}
	if t.Delay <= 0 {
		return true, false
	}
	for {
		before := l.o.Now()
		c, err := l.o.Scheduler.Start(ctx, t.key, t.Delay, l.lease())
		switch {
		case err != nil:
			return l.refuse(t, CauseCrawlDelay, busyRetryAfter, fmt.Errorf("politeness: claim the turn: %w", err)), false
		case c.Wait <= 0:
			l.claimed(ctx, t, c.ID, before)
			return true, false
		case l.o.Reject || l.o.Now().Add(c.Wait).After(deadline):
			return l.refuse(t, CauseCrawlDelay, c.Wait, nil), false
		}
		w := c.Wait
		if c.Held {
			w = min(w, heldPoll) // held until sent: ask again soon
		}
		if !l.wait(ctx, t, CauseCrawlDelay, func(ctx context.Context) error { return l.o.Sleep(ctx, w) }) {
			return false, false
		}
	}
}

// errMaxWait: the request waited MaxWait for an in-flight slot.
var errMaxWait = errors.New("waited politeness.max_wait")

// wait runs f, which holds the request for cause, and adds the time it
// took to t; when f fails the request is refused.
func (l *Limiter) wait(ctx context.Context, t *Ticket, cause Cause, f func(context.Context) error) bool {
	t.held = true
	start := l.o.Now()
	err := f(ctx)
	d := l.o.Now().Sub(start)
	t.Waited += d
	if d > t.longest {
		t.longest, t.WaitCause = d, cause
	}
	if l.o.Observer != nil {
		l.o.Observer.Waited(cause, d)
	}
	switch {
	case errors.Is(err, errMaxWait):
		return l.refuse(t, cause, busyRetryAfter, nil)
	case err != nil:
		return l.refuse(t, cause, busyRetryAfter, fmt.Errorf("politeness: gave up waiting: %w", err))
	}
	return true
}

// refuse marks t refused and returns false.
func (l *Limiter) refuse(t *Ticket, cause Cause, retryAfter time.Duration, err error) bool {
	if cause == "" {
		cause = CauseCrawlDelay
	}
	t.Refused, t.RetryAfter, t.Err = cause, retryAfter, err
	if l.o.Observer != nil {
		l.o.Observer.Rejected(cause)
	}
	return false
}

// Observe reports the origin's answer to an admitted request: a 429, or a
// 503 with a valid Retry-After, pauses its Key (Backoff); any other status
// below 500 is a success, which clears an ended back-off. retryAfter and
// date are the response's Retry-After and Date field values. It returns
// the Scheduler's error, if any.
func (l *Limiter) Observe(ctx context.Context, t *Ticket, status int, retryAfter, date string) error {
	if l == nil || t == nil || !t.scheduled || t.Refused != "" || !l.o.Backoff {
		return nil
	}
	ra, ok := ParseRetryAfter(retryAfter, date, l.o.Now())
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable && ok:
		pause, err := l.o.Scheduler.Backoff(ctx, t.key, Backoff{RetryAfter: ra, HasRetryAfter: ok})
		t.Backoff = pause
		return err
	case status < 500:
		if ts, ok := l.o.Scheduler.(Turnstile); ok {
			ts.SucceededLater(t.key) // off the response's path
			return nil
		}
		return l.o.Scheduler.Succeeded(ctx, t.key)
	}
	return nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-tm.C:
		return nil
	}
}
