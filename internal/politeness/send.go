package politeness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrTurnLost is returned by Ticket.Sending when the request may not be
// sent: it was not sent within Options.SendWithin of its turn, or no new
// turn could be claimed for a second send of it.
var ErrTurnLost = errors.New("politeness: the request's turn ended before it was sent")

// sendState is what a Paced Ticket knows of its request's sends.
type sendState struct {
	ctx     context.Context // the request's, for a second claim
	mu      sync.Mutex
	claim   uint64    // the claim held, 0 when none
	by      time.Time // the claim's lease ends (on the Limiter's clock)
	writing bool      // Sending returned, Wrote not yet called
	sent    bool      // a send of the request was reported
	lost    bool      // a claim ended unsent: no more sends
	atEnd   bool      // the write is not reported: Release counts it
	done    bool      // Release was called
}

// lease is the lease of a claim: 0 (sent when claimed) without
// CountFromSend.
func (l *Limiter) lease() time.Duration {
	if !l.o.CountFromSend {
		return 0
	}
	return l.o.SendWithin
}

// claimed records in t the claim id a Scheduler granted, asked for at
// before: the request is Paced from now on.
func (l *Limiter) claimed(ctx context.Context, t *Ticket, id uint64, before time.Time) {
	if id == 0 || !l.o.CountFromSend {
		return
	}
	t.send = &sendState{ctx: ctx, claim: id, by: before.Add(l.o.SendWithin)}
	t.l = l
}

// Paced reports whether the request's sends must be reported: a crawl
// delay applies and the Limiter counts from the send
// (Options.CountFromSend). The caller then calls Sending just before
// each write that begins the request on a connection to the origin, and
// Wrote just after that write returns.
func (t *Ticket) Paced() bool { return t != nil && t.send != nil }

// Sending is called just before the request's first octet is written to
// a connection to the origin. It returns nil when the write may go ahead,
// and ErrTurnLost (wrapped) when it must not: the request was not sent
// within Options.SendWithin of its turn. A request sent a second time
// (again on a new connection, or a retry) first claims a new turn,
// waiting for it as Admit does. A write after Release is not the
// request's own and goes ahead.
func (t *Ticket) Sending() error {
	if !t.Paced() {
		return nil
	}
	s := t.send
	s.mu.Lock()
	if s.done || s.writing {
		s.mu.Unlock()
		return nil
	}
	if s.lost {
		s.mu.Unlock()
		return ErrTurnLost
	}
	if s.claim == 0 { // sent before: a new turn for this send
		s.mu.Unlock()
		id, by, err := t.l.claimAgain(s.ctx, t)
		s.mu.Lock()
		if err != nil || s.done {
			s.lost = true
			s.mu.Unlock()
			if id != 0 {
				t.l.sent(t, id, time.Time{}, false)
			}
			return errors.Join(ErrTurnLost, err)
		}
		s.claim, s.by = id, by
	}
	if t.l.o.Now().After(s.by) {
		id := s.claim
		s.claim, s.lost = 0, true
		s.mu.Unlock()
		t.l.sent(t, id, time.Time{}, false)
		return fmt.Errorf("%w: not sent within %v of its turn", ErrTurnLost, t.l.o.SendWithin)
	}
	s.writing = true
	s.mu.Unlock()
	return nil
}

// SendingUnreported is Sending for a write that will not be reported
// (the connection cannot tell when it writes): the request counts as sent
// at Wrote, to be called once the write is known to be done (the origin's
// first response octet), or at Release.
func (t *Ticket) SendingUnreported() error {
	err := t.Sending()
	if err == nil && t.Paced() {
		t.send.mu.Lock()
		t.send.atEnd = t.send.writing
		t.send.mu.Unlock()
	}
	return err
}

// Wrote is called right after the write Sending allowed returns, whether
// it failed or not: the request counts as sent now, and the key's next
// turn is its crawl delay later.
func (t *Ticket) Wrote() {
	if !t.Paced() {
		return
	}
	s := t.send
	s.mu.Lock()
	if !s.writing {
		s.mu.Unlock()
		return
	}
	at := t.l.o.Now()
	id := s.claim
	s.writing, s.claim, s.sent = false, 0, true
	s.mu.Unlock()
	t.l.sent(t, id, at, true)
}

// release ends the request's turn when it holds one that is not being
// written: nothing was sent under it. A write under way keeps the turn
// until Wrote, unless it is not reported (SendingUnreported): then it
// counts as sent now.
func (s *sendState) release(t *Ticket) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.done = true
	id, sent := s.claim, s.writing && s.atEnd
	switch {
	case sent:
		s.claim, s.writing = 0, false
	case s.writing:
		id = 0
	default:
		s.claim = 0
	}
	s.mu.Unlock()
	if id != 0 {
		t.l.sent(t, id, t.l.o.Now(), sent)
	}
}

// sent ends claim id of t's key: sent at at, or never sent. It is not
// cut short when the request's context ends (the request may be over). A
// Scheduler's error leaves the claim to end with its lease.
func (l *Limiter) sent(t *Ticket, id uint64, at time.Time, sent bool) {
	ago := time.Duration(0)
	if sent {
		ago = max(0, l.o.Now().Sub(at))
	}
	_ = l.o.Scheduler.Sent(context.Background(), t.key, id, t.Delay, ago, sent)
}

// claimAgain claims a new turn for a second send of t's request, waiting
// for it for at most MaxWait. It returns the claim and the end of its
// lease.
func (l *Limiter) claimAgain(ctx context.Context, t *Ticket) (uint64, time.Time, error) {
	deadline := l.o.Now().Add(l.o.MaxWait)
	for {
		before := l.o.Now()
		c, err := l.o.Scheduler.Start(ctx, t.key, t.Delay, l.o.SendWithin)
		switch {
		case err != nil:
			return 0, time.Time{}, fmt.Errorf("politeness: claim a turn to send again: %w", err)
		case c.Wait <= 0:
			return c.ID, before.Add(l.o.SendWithin), nil
		case before.Add(c.Wait).After(deadline):
			return 0, time.Time{}, fmt.Errorf("politeness: no turn to send again within politeness.max_wait")
		}
		w := c.Wait
		if c.Held {
			w = min(w, heldPoll)
		}
		if err := l.o.Sleep(ctx, w); err != nil {
			return 0, time.Time{}, fmt.Errorf("politeness: wait for a turn to send again: %w", err)
		}
	}
}
