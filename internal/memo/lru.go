package memo

// LRU is a least-recently-used map bounded by entries and, optionally, by
// the total size of its entries: adding an entry evicts the least recently
// used ones while a bound is passed, never the entry just added (so a
// single entry larger than the size bound is kept, alone). It costs one
// allocation per key. The zero LRU is not usable: make one with NewLRU. An
// LRU is not safe for concurrent use.
type LRU[K comparable, V any] struct {
	max     int
	maxSize int64
	size    func(K, V) int64
	m       map[K]*node[K, V]
	root    node[K, V] // sentinel: root.next is the least recently used
	total   int64
}

type node[K comparable, V any] struct {
	key        K
	val        V
	size       int64
	prev, next *node[K, V]
}

// NewLRU returns an empty LRU of at most max entries (max >= 1). When size
// is not nil, the sizes it reports for the entries (in any unit, usually
// octets) add up to at most maxSize as well.
func NewLRU[K comparable, V any](max int, maxSize int64, size func(K, V) int64) *LRU[K, V] {
	l := &LRU[K, V]{max: max, maxSize: maxSize, size: size, m: make(map[K]*node[K, V])}
	l.root.prev, l.root.next = &l.root, &l.root
	return l
}

// Get returns the value stored under k, and whether there is one, and
// marks it the most recently used.
func (l *LRU[K, V]) Get(k K) (V, bool) {
	n, ok := l.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	l.unlink(n)
	l.pushBack(n)
	return n.val, true
}

// Peek returns the value stored under k, and whether there is one, and
// leaves the order alone.
func (l *LRU[K, V]) Peek(k K) (V, bool) {
	if n, ok := l.m[k]; ok {
		return n.val, true
	}
	var zero V
	return zero, false
}

// Add stores v under k as the most recently used entry, replacing any
// previous value, then evicts the least recently used entries while a
// bound is passed. It appends the keys it evicted to evicted and returns
// the result.
func (l *LRU[K, V]) Add(k K, v V, evicted []K) []K {
	n, ok := l.m[k]
	if ok {
		l.unlink(n)
		l.total -= n.size
	} else {
		n = &node[K, V]{key: k}
		l.m[k] = n
	}
	n.val, n.size = v, 0
	if l.size != nil {
		n.size = l.size(k, v)
	}
	l.total += n.size
	for o := l.root.next; o != &l.root && (len(l.m) > l.max || l.size != nil && l.total > l.maxSize); o = l.root.next {
		l.remove(o)
		evicted = append(evicted, o.key)
	}
	l.pushBack(n)
	return evicted
}

// Remove forgets k and reports whether it was there.
func (l *LRU[K, V]) Remove(k K) bool {
	n, ok := l.m[k]
	if ok {
		l.remove(n)
	}
	return ok
}

// Oldest returns the least recently used entry, ok false when the LRU is
// empty.
func (l *LRU[K, V]) Oldest() (k K, v V, ok bool) {
	if n := l.root.next; n != &l.root {
		return n.key, n.val, true
	}
	return k, v, false
}

// Len returns the number of entries.
func (l *LRU[K, V]) Len() int { return len(l.m) }

// Size returns the total size of the entries, 0 when NewLRU got no size
// function.
func (l *LRU[K, V]) Size() int64 { return l.total }

func (l *LRU[K, V]) remove(n *node[K, V]) {
	l.unlink(n)
	delete(l.m, n.key)
	l.total -= n.size
}

func (l *LRU[K, V]) unlink(n *node[K, V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
}

func (l *LRU[K, V]) pushBack(n *node[K, V]) {
	n.prev, n.next = l.root.prev, &l.root
	n.prev.next, l.root.prev = n, n
}
