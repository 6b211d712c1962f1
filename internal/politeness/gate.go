package politeness

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/sync/semaphore"
)

// ErrBusy is returned by Gate.Acquire without waiting when the authority
// has no free in-flight slot.
var ErrBusy = errors.New("politeness: the authority has its maximum of requests in flight")

// Gate caps the requests in flight per authority, across product tokens.
// Implementations are safe for concurrent use.
type Gate interface {
	// Acquire takes one in-flight slot of authority. With wait it waits,
	// first come first served, until a slot is free or ctx ends (then it
	// returns ctx's error); without, it returns ErrBusy at once when none
	// is free. release gives the slot back; calling it again does nothing.
	Acquire(ctx context.Context, authority string, wait bool) (release func(), err error)
}

// LocalGate is a Gate for one proxy. It holds state only for authorities
// with requests in flight or waiting, so its memory follows the load.
type LocalGate struct {
	n  int64
	mu sync.Mutex
	m  map[string]*hostSlots
}

// hostSlots are one authority's slots and the number of requests holding
// or waiting for one; the entry is dropped when that reaches 0.
type hostSlots struct {
	sem  *semaphore.Weighted // FIFO
	refs int
}

// NewLocalGate returns a Gate that lets n requests per authority be in
// flight at once; n must be at least 1.
func NewLocalGate(n int) *LocalGate {
	return &LocalGate{n: int64(max(n, 1)), m: make(map[string]*hostSlots)}
}

// Len returns the number of authorities with requests in flight or
// waiting.
func (g *LocalGate) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

// Acquire implements Gate.
func (g *LocalGate) Acquire(ctx context.Context, authority string, wait bool) (func(), error) {
	g.mu.Lock()
	h := g.m[authority]
	if h == nil {
		h = &hostSlots{sem: semaphore.NewWeighted(g.n)}
		g.m[authority] = h
	}
	h.refs++
	g.mu.Unlock()
	var err error
	if !wait {
		if !h.sem.TryAcquire(1) {
			err = ErrBusy
		}
	} else {
		err = h.sem.Acquire(ctx, 1)
	}
	if err != nil {
		g.unref(authority, h)
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.sem.Release(1)
			g.unref(authority, h)
		})
	}, nil
}

func (g *LocalGate) unref(authority string, h *hostSlots) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if h.refs--; h.refs == 0 {
		delete(g.m, authority)
	}
}
