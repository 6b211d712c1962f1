package mitm

import (
	"container/list"
	"crypto/tls"
	"time"
)

// lru is a bounded least-recently-used map from cache key to certificate.
// It is not safe for concurrent use; Certs guards it with a mutex.
type lru struct {
	max   int
	order *list.List // of *entry, most recently used first
	index map[string]*list.Element
}

type entry struct {
	key       string
	cert      *tls.Certificate
	refreshAt time.Time // the entry is stale from this instant on
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), index: make(map[string]*list.Element)}
}

// get returns the fresh certificate for key and marks it recently used. A
// stale entry is removed and reported as absent.
func (l *lru) get(key string, now time.Time) *tls.Certificate {
	el, ok := l.index[key]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if !now.Before(e.refreshAt) {
		l.order.Remove(el)
		delete(l.index, key)
		return nil
	}
	l.order.MoveToFront(el)
	return e.cert
}

// add stores cert under key, replacing any previous entry, and evicts
// least recently used entries beyond max. It returns how many it evicted.
func (l *lru) add(key string, cert *tls.Certificate, refreshAt time.Time) (evicted int) {
	if el, ok := l.index[key]; ok {
		el.Value = &entry{key: key, cert: cert, refreshAt: refreshAt}
		l.order.MoveToFront(el)
		return 0
	}
	l.index[key] = l.order.PushFront(&entry{key: key, cert: cert, refreshAt: refreshAt})
	for l.order.Len() > l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.index, oldest.Value.(*entry).key)
		evicted++
	}
	return evicted
}

func (l *lru) len() int { return l.order.Len() }
