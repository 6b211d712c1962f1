package payments

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrStoreUnavailable is wrapped by a Ledger that cannot answer (its shared
// store is unreachable or failed): nothing is paid.
var ErrStoreUnavailable = errors.New("spend ledger unavailable")

// Key names one budget's spend on one day: the configured entry, the
// currency, and the UTC day.
type Key struct {
	// Budget names the payments.identities entry ("user:alice",
	// "range:10.0.0.0/8", "token:examplebot", "default"): every identity
	// the entry covers spends from one budget.
	Budget string
	// Currency is the budget's ISO 4217 code.
	Currency string
	// Day is the UTC day, "2006-01-02".
	Day string
}

// DayOf returns the UTC day of t in Key.Day's form.
func DayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Ledger counts what each budget spent per day, and the hosts whose
// payments are blocked after a protocol breach. Reserve and Adjust are
// atomic and capped: no number of concurrent calls, from any number of
// processes sharing the ledger, takes a day's spend past the budget.
// Implementations: Local (one process) and fleet.Store.Ledger (a fleet,
// in Redis or Valkey). Errors wrap ErrStoreUnavailable when the store
// cannot answer.
type Ledger interface {
	// Reserve adds amount to k's spend if the spend then stays at or
	// below budget, and reports whether it did. An error means nothing
	// was reserved.
	Reserve(ctx context.Context, k Key, amount, budget Amount) (bool, error)
	// Adjust adds delta to k's spend: a negative delta releases (the
	// spend never goes below zero), a positive one adds at most what
	// keeps the spend at or below budget (nothing when it is already
	// there). It settles a reservation to what was charged.
	Adjust(ctx context.Context, k Key, delta, budget Amount) error
	// Block stops payments to host (lower-case, without port) for d
	// from now.
	Block(ctx context.Context, host string, now time.Time, d time.Duration) error
	// Blocked reports whether payments to host are blocked at now.
	Blocked(ctx context.Context, host string, now time.Time) (bool, error)
}

// Local is a Ledger in this process's memory. It keeps the current
// days only: a key of an older day than the newest one seen is dropped.
// The zero Local is ready; safe for concurrent use.
type Local struct {
	mu      sync.Mutex
	spent   map[Key]Amount
	newest  string               // the newest Day seen
	blocked map[string]time.Time // host: blocked until
}

// Reserve implements Ledger.
func (l *Local) Reserve(_ context.Context, k Key, amount, budget Amount) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turn(k.Day)
	if amount < 0 || l.spent[k] > budget-amount {
		return false, nil
	}
	l.spent[k] += amount
	return true, nil
}

// Adjust implements Ledger.
func (l *Local) Adjust(_ context.Context, k Key, delta, budget Amount) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turn(k.Day)
	if delta > 0 {
		delta = max(0, min(delta, budget-l.spent[k]))
	}
	if l.spent[k]+delta <= 0 {
		delete(l.spent, k)
		return nil
	}
	l.spent[k] += delta
	return nil
}

// Block implements Ledger. Hosts whose block has ended are forgotten
// then, so the map holds only the hosts blocked now.
func (l *Local) Block(_ context.Context, host string, now time.Time, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.blocked == nil {
		l.blocked = map[string]time.Time{}
	}
	for h, u := range l.blocked {
		if !now.Before(u) {
			delete(l.blocked, h)
		}
	}
	if until := now.Add(d); until.After(l.blocked[host]) {
		l.blocked[host] = until
	}
	return nil
}

// Blocked implements Ledger.
func (l *Local) Blocked(_ context.Context, host string, now time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.blocked[host]
	if ok && !now.Before(u) {
		delete(l.blocked, host)
		return false, nil
	}
	return ok, nil
}

// Spent returns k's spend.
func (l *Local) Spent(k Key) Amount {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spent[k]
}

// turn drops the days before day when day is newer than any seen (a day
// string sorts as its date). l.mu is held.
func (l *Local) turn(day string) {
	if l.spent == nil {
		l.spent = map[Key]Amount{}
	}
	if day <= l.newest {
		return
	}
	// Keep the day before too: a reservation made just before midnight
	// UTC settles on its own day's key.
	for k := range l.spent {
		if k.Day < l.newest {
			delete(l.spent, k)
		}
	}
	l.newest = day
}
