package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// wakes wakes the replica's waiters for another replica's robots.txt
// fetch: a replica that shares a result (or gives up its fetch lock)
// publishes the record key on one channel of the fleet (PUBLISH), and
// every replica, subscribed to that channel on one connection of its
// own, wakes the waiters of that key. Pub/sub delivers at most once: a
// message lost while the subscription reconnects costs a waiter the
// re-check interval (recheck), never a wrong result.
type wakes struct {
	ps *redis.PubSub
	// subscribed is set once the store confirmed the subscription:
	// until then waiters poll as without notifications.
	subscribed atomic.Bool

	mu      sync.Mutex
	waiting map[string]map[chan struct{}]struct{} // by record key
	done    chan struct{}                         // closed when run returns
}

// startWakes subscribes to channel on rdb, in the background (a store
// that does not answer yet does not hold up New; go-redis subscribes
// again after every reconnection).
func startWakes(rdb redis.UniversalClient, channel string) *wakes {
	w := &wakes{ps: rdb.Subscribe(context.Background()), waiting: map[string]map[chan struct{}]struct{}{},
		done: make(chan struct{})}
	go func() {
		_ = w.ps.Subscribe(context.Background(), channel) // on failure, retried by the receiving loop
		w.run(w.ps.ChannelWithSubscriptions())
	}()
	return w
}

// run delivers the messages until the subscription is closed.
func (w *wakes) run(ch <-chan any) {
	defer close(w.done)
	for m := range ch {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				w.subscribed.Store(true)
			}
		case *redis.Message:
			w.wake(m.Payload)
		}
	}
}

// wake wakes the waiters of key.
func (w *wakes) wake(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.waiting[key] {
		select {
		case c <- struct{}{}:
		default: // already woken
		}
	}
}

// watch registers a waiter for key: its channel receives a value when
// key's record is published after watch returned. stop unregisters it.
func (w *wakes) watch(key string) (c chan struct{}, stop func()) {
	c = make(chan struct{}, 1)
	w.mu.Lock()
	if w.waiting[key] == nil {
		w.waiting[key] = map[chan struct{}]struct{}{}
	}
	w.waiting[key][c] = struct{}{}
	w.mu.Unlock()
	return c, func() {
		w.mu.Lock()
		delete(w.waiting[key], c)
		if len(w.waiting[key]) == 0 {
			delete(w.waiting, key)
		}
		w.mu.Unlock()
	}
}

// close ends the subscription and waits up to a second for its
// receiving loop (a dial in progress holds it up to its own timeout).
func (w *wakes) close() {
	if w == nil {
		return
	}
	_ = w.ps.Close()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}
