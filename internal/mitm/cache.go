package mitm

import (
	"crypto/tls"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// lru is a bounded least-recently-used map from cache key to certificate,
// whose entries go stale. It is not safe for concurrent use; Certs guards
// it with a mutex.
type lru struct {
	l *memo.LRU[string, entry]
}

type entry struct {
	cert      *tls.Certificate
	refreshAt time.Time // the entry is stale from this instant on
}

func newLRU(max int) *lru {
	return &lru{l: memo.NewLRU[string, entry](max, 0, nil)}
}

// get returns the fresh certificate for key and marks it recently used. A
// stale entry is removed and reported as absent.
func (l *lru) get(key string, now time.Time) *tls.Certificate {
	e, ok := l.l.Get(key)
	if !ok {
		return nil
	}
	if !now.Before(e.refreshAt) {
		l.l.Remove(key)
		return nil
	}
	return e.cert
}

// add stores cert under key, replacing any previous entry, and evicts
// least recently used entries beyond max. It returns how many it evicted.
func (l *lru) add(key string, cert *tls.Certificate, refreshAt time.Time) (evicted int) {
	return len(l.l.Add(key, entry{cert: cert, refreshAt: refreshAt}, nil))
}

func (l *lru) len() int { return l.l.Len() }
