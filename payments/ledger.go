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

// Ledger counts what each budget spent per day. Reserve is atomic: no
// number of concurrent calls, from any number of processes sharing the
// ledger, takes a day's spend past the budget. Implementations: Local
// (one process) and fleet.Store.Ledger (a fleet, in Redis or Valkey).
type Ledger interface {
	// Reserve adds amount to k's spend if the spend then stays at or
	// below budget, and reports whether it did. An error (wrapping
	// ErrStoreUnavailable when the store cannot answer) means nothing was
	// reserved.
	Reserve(ctx context.Context, k Key, amount, budget Amount) (bool, error)
	// Adjust adds delta (negative to release) to k's spend, without a
	// cap: it settles a reservation to what was charged. The spend never
	// goes below zero.
	Adjust(ctx context.Context, k Key, delta Amount) error
}

// Local is a Ledger in this process's memory. It keeps the current
// days only: a key of an older day than the newest one seen is dropped.
// The zero Local is ready; safe for concurrent use.
type Local struct {
	mu     sync.Mutex
	spent  map[Key]Amount
	newest string // the newest Day seen
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
func (l *Local) Adjust(_ context.Context, k Key, delta Amount) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turn(k.Day)
	if l.spent[k]+delta <= 0 {
		delete(l.spent, k)
		return nil
	}
	l.spent[k] += delta
	return nil
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
