package report

import "sort"

// topK keeps the heaviest keys of an unbounded stream in at most capacity
// entries: the Space-Saving algorithm (Metwally, Agrawal, El Abbadi, 2005).
// A key not present when the table is full takes the place of the lightest
// entry and inherits its count: its count is then an overestimate by at
// most err, and count-err is a guaranteed lower bound. Any key whose true
// count exceeds total/capacity is guaranteed to be in the table.
//
// Memory is capacity entries plus the keys themselves, whatever the number
// of distinct keys. The payload P rides along with each entry; it is reset
// to its zero value when the entry's slot is taken by a new key. Keys
// longer than maxKeyLen octets are cut to maxKeyLen before counting.
type topK[P any] struct {
	capacity int
	index    map[string]int32
	entries  []topEntry[P]
	heap     []int32 // entry indexes, a min-heap on count
	distinct distinct
	evicted  uint64
}

// maxKeyLen bounds the octets kept of one key (URLs and rules can be
// long; the proxy's own audit field limit usually cuts them first).
const maxKeyLen = 2048

type topEntry[P any] struct {
	key   string
	count uint64
	err   uint64
	pos   int32 // position in heap
	p     P
}

func newTopK[P any](capacity int) *topK[P] {
	if capacity < 1 {
		capacity = 1
	}
	return &topK[P]{capacity: capacity, index: make(map[string]int32), distinct: newDistinct(distinctExactCap, 12)}
}

// add counts w for key and returns the key's payload. key may alias a
// reused buffer: it is copied only when it enters the table.
func (t *topK[P]) add(key []byte, w uint64) *P {
	if len(key) > maxKeyLen {
		key = key[:maxKeyLen]
	}
	t.distinct.addBytes(key)
	if i, ok := t.index[string(key)]; ok {
		e := &t.entries[i]
		e.count += w
		t.down(int(e.pos))
		return &e.p
	}
	if len(t.entries) < t.capacity {
		i := int32(len(t.entries))
		t.entries = append(t.entries, topEntry[P]{key: string(key), count: w, pos: int32(len(t.heap))})
		t.index[t.entries[i].key] = i
		t.heap = append(t.heap, i)
		t.up(len(t.heap) - 1)
		return &t.entries[i].p
	}
	i := t.heap[0]
	e := &t.entries[i]
	delete(t.index, e.key)
	t.evicted++
	var zero P
	*e = topEntry[P]{key: string(key), count: e.count + w, err: e.count, pos: 0, p: zero}
	t.index[e.key] = i
	t.down(0)
	return &e.p
}

func (t *topK[P]) less(a, b int) bool {
	return t.entries[t.heap[a]].count < t.entries[t.heap[b]].count
}

func (t *topK[P]) swap(a, b int) {
	t.heap[a], t.heap[b] = t.heap[b], t.heap[a]
	t.entries[t.heap[a]].pos = int32(a)
	t.entries[t.heap[b]].pos = int32(b)
}

func (t *topK[P]) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !t.less(j, i) {
			break
		}
		t.swap(i, j)
		j = i
	}
}

func (t *topK[P]) down(i int) {
	n := len(t.heap)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if k := j + 1; k < n && t.less(k, j) {
			j = k
		}
		if !t.less(j, i) {
			return
		}
		t.swap(i, j)
		i = j
	}
}

// sorted returns the entries, heaviest first, ties by key.
func (t *topK[P]) sorted() []*topEntry[P] {
	out := make([]*topEntry[P], len(t.entries))
	for i := range t.entries {
		out[i] = &t.entries[i]
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].count != out[b].count {
			return out[a].count > out[b].count
		}
		return out[a].key < out[b].key
	})
	return out
}

// full reports whether the bound was hit: some key was evicted.
func (t *topK[P]) full() bool { return t.evicted > 0 }
