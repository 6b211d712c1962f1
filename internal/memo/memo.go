// Package memo holds the module's two bounded caches: Memo, a map that
// forgets everything when it is full, for values that are cheap to compute
// again, and LRU, a least-recently-used map bounded by entries and by the
// total size of its entries.
package memo

import "sync"

// Memo is a map bounded by entries and, optionally, by the total size of
// its values. Storing a new key that would pass a bound first forgets every
// entry: a memo of values computed from client input (User-Agent values,
// Host values, credentials) stays bounded without keeping an order. The
// zero Memo is not usable: make one with New or NewSized. A Memo is not
// safe for concurrent use; Sync is.
type Memo[K comparable, V any] struct {
	m       map[K]V
	max     int
	maxSize int64
	size    func(V) int64
	total   int64
}

// New returns an empty Memo of at most max entries (max >= 1).
func New[K comparable, V any](max int) *Memo[K, V] {
	return &Memo[K, V]{m: make(map[K]V), max: max}
}

// NewSized returns an empty Memo of at most max entries whose values'
// sizes, as size reports them (in any unit, usually octets), add up to at
// most maxSize, unless a single value is larger.
func NewSized[K comparable, V any](max int, maxSize int64, size func(V) int64) *Memo[K, V] {
	return &Memo[K, V]{m: make(map[K]V), max: max, maxSize: maxSize, size: size}
}

// Get returns the value stored under k and whether there is one.
func (m *Memo[K, V]) Get(k K) (V, bool) {
	v, ok := m.m[k]
	return v, ok
}

// Put stores v under k. When k is new and the memo holds max entries, or
// v's size would take the total past maxSize, every entry is forgotten
// first.
func (m *Memo[K, V]) Put(k K, v V) {
	var n int64
	if m.size != nil {
		n = m.size(v)
		if old, ok := m.m[k]; ok {
			m.total -= m.size(old)
		} else if len(m.m) >= m.max || m.total+n > m.maxSize {
			m.Clear()
		}
		m.total += n
	} else if _, ok := m.m[k]; !ok && len(m.m) >= m.max {
		m.Clear()
	}
	m.m[k] = v
}

// Len returns the number of entries.
func (m *Memo[K, V]) Len() int { return len(m.m) }

// Size returns the total size of the values, 0 for a memo made by New.
func (m *Memo[K, V]) Size() int64 { return m.total }

// Clear forgets every entry.
func (m *Memo[K, V]) Clear() {
	clear(m.m)
	m.total = 0
}

// Sync is a Memo safe for concurrent use: readers share a read lock. The
// zero Sync is not usable: make one with NewSync.
type Sync[K comparable, V any] struct {
	mu sync.RWMutex
	m  Memo[K, V]
}

// NewSync returns an empty Sync of at most max entries (max >= 1).
func NewSync[K comparable, V any](max int) *Sync[K, V] {
	return &Sync[K, V]{m: Memo[K, V]{m: make(map[K]V), max: max}}
}

// Get returns the value stored under k and whether there is one.
func (s *Sync[K, V]) Get(k K) (V, bool) {
	s.mu.RLock()
	v, ok := s.m.m[k]
	s.mu.RUnlock()
	return v, ok
}

// Put stores v under k as Memo.Put does.
func (s *Sync[K, V]) Put(k K, v V) {
	s.mu.Lock()
	s.m.Put(k, v)
	s.mu.Unlock()
}

// Len returns the number of entries.
func (s *Sync[K, V]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.m.m)
}

// Interner returns one string per distinct value, so that values read
// many times (from many lines) allocate once. It is a Memo of at most max
// strings of at most maxLen octets each; a longer value is not kept. The
// nil *Interner interns nothing. Not safe for concurrent use.
type Interner struct {
	m      Memo[string, string]
	maxLen int
}

// NewInterner returns an empty Interner of at most max strings of at most
// maxLen octets each.
func NewInterner(max, maxLen int) *Interner {
	return &Interner{m: Memo[string, string]{m: make(map[string]string), max: max}, maxLen: maxLen}
}

// String returns b as a string, the one kept when b was seen before. It
// allocates only for a value not kept.
func (in *Interner) String(b []byte) string {
	if in == nil || len(b) > in.maxLen {
		return string(b)
	}
	if s, ok := in.m.m[string(b)]; ok {
		return s
	}
	s := string(b)
	in.m.Put(s, s)
	return s
}
