package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// leases renews the in-flight leases this replica holds (see Gate.hold):
// one goroutine renews them all every leaseTTL/renewFrac, in one
// pipeline, so that a request pays no goroutine or timer of its own for
// its lease. A lease lasts leaseTTL unless renewed: the slots of a
// replica that dies come back within leaseTTL.
type leases struct {
	s    *Store
	mu   sync.Mutex
	held map[leaseRef]struct{}
	quit chan struct{} // closed by stop
	done chan struct{} // closed when run returns
	once sync.Once     // closes quit
}

// leaseRef names a lease: its id in the gate key's sorted set.
type leaseRef struct{ key, id string }

// startLeases starts the renewer of s.
func startLeases(s *Store) *leases {
	l := &leases{s: s, held: map[leaseRef]struct{}{}, quit: make(chan struct{}), done: make(chan struct{})}
	go l.run(leaseTTL / renewFrac)
	return l
}

// add renews the lease from now on.
func (l *leases) add(key, id string) {
	l.mu.Lock()
	l.held[leaseRef{key, id}] = struct{}{}
	l.mu.Unlock()
}

// remove stops renewing the lease.
func (l *leases) remove(key, id string) {
	l.mu.Lock()
	delete(l.held, leaseRef{key, id})
	l.mu.Unlock()
}

// stop ends the renewals and waits for the renewer.
func (l *leases) stop() {
	l.once.Do(func() { close(l.quit) })
	<-l.done
}

func (l *leases) run(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			return
		case <-t.C:
			l.renew()
		}
	}
}

// renew extends every lease held, in one pipeline; a lease released
// meanwhile is not brought back (renewScript extends a lease still in the
// set). A renewal that fails is counted: the lease ends with its TTL.
func (l *leases) renew() {
	l.mu.Lock()
	refs := make([]leaseRef, 0, len(l.held))
	for r := range l.held {
		refs = append(refs, r)
	}
	l.mu.Unlock()
	if len(refs) == 0 || !l.s.h.usable() {
		return
	}
	s := l.s
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	ms := leaseTTL.Milliseconds()
	for len(refs) > 0 {
		n := min(len(refs), laterBatch)
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.Cmd, n)
		for i, r := range refs[:n] {
			cmds[i] = renewScript.EvalSha(ctx, pipe, []string{r.key}, r.id, ms)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			for i, c := range cmds {
				if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
					err = renewScript.Eval(ctx, s.rdb, []string{refs[i].key}, refs[i].id, ms).Err()
				}
				if err != nil && !errors.Is(err, redis.Nil) {
					s.h.failed(opPoliteness, err)
					return
				}
			}
		}
		refs = refs[n:]
	}
	s.h.ok()
}
