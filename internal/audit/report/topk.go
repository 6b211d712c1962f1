package report

import (
	"sort"
	"unsafe"
)

// topK keeps the heaviest keys of an unbounded stream in bounded memory:
// the Space-Saving algorithm (Metwally, Agrawal, El Abbadi, 2005), bounded
// both by entries (capacity) and by octets (budget).
//
// A table accounts each entry's cost: the key's octets, the heap octets
// its payload owns (the size function), and a fixed overhead for the
// entry, its index slot and its heap slot (entryOverhead). A key not
// present takes a new entry; first, while the table holds capacity
// entries or the new entry would take it past its budget, the lightest
// entry (the smallest count) is evicted. When a payload grows, the
// lightest entries are evicted until the table is within its budget
// again. A key entering after any eviction starts at floor, the count of
// the last entry evicted, and records it as err: its count is then an
// overestimate by at most err, and count-err is a guaranteed lower bound.
// floor never decreases and is at most the smallest count held, so a key
// not held counted at most floor ≤ total/k times, k being the entries
// held: any key whose true count exceeds total/k is in the table. With
// keys of a few octets the capacity binds first and k is the capacity, as
// in the plain algorithm; with long keys the budget binds first and k is
// smaller.
//
// The payload P rides along with each entry; an entry enters with its
// zero value. Keys longer than maxKeyLen octets are cut to maxKeyLen
// before counting.
type topK[P any] struct {
	capacity int
	budget   int64        // octets
	size     func(*P) int // heap octets a payload owns; nil: none
	overhead int64        // per entry: see entryOverhead
	used     int64        // accounted octets, the sum of the entries' cost
	index    map[string]int32
	entries  []topEntry[P] // unordered; an eviction moves the last entry into the freed slot
	heap     []int32       // entry indexes, a min-heap on count
	distinct distinct
	floor    uint64 // the count of the last entry evicted
	evicted  uint64
	byBytes  uint64 // evictions because of the budget
	touched  int32  // the entry the last add returned, not yet settled; -1: none
}

// maxKeyLen bounds the octets kept of one key (URLs and rules can be
// long; the proxy's own audit field limit usually cuts them first).
const maxKeyLen = 2048

// indexEntryBytes is what one key costs in the index map besides the key's
// octets: its string header, its int32 value and the map's slack.
const indexEntryBytes = 48

// minBudget is the least budget a table takes, so that a few entries of
// the longest keys always fit.
const minBudget = 64 << 10

type topEntry[P any] struct {
	key   string
	count uint64
	err   uint64
	pos   int32 // position in heap
	cost  int32 // octets accounted, as of the last settle
	p     P
}

// entryOverhead is the octets one entry costs besides its key and its
// payload's heap: the entry itself, its index slot and its heap slot.
func entryOverhead[P any]() int64 {
	return int64(unsafe.Sizeof(topEntry[P]{})) + indexEntryBytes + 4
}

// newTopK returns a table of at most capacity entries and budget
// accounted octets (at least minBudget); size, when not nil, gives the
// heap octets a payload owns.
func newTopK[P any](capacity int, budget int64, size func(*P) int) *topK[P] {
	if capacity < 1 {
		capacity = 1
	}
	budget = max(budget, minBudget)
	return &topK[P]{capacity: capacity, budget: budget, size: size, overhead: entryOverhead[P](),
		index: make(map[string]int32), distinct: newDistinct(distinctExactCap, 12), touched: -1}
}

// add counts w for key and returns the key's payload, which the caller
// may update until its next call of add or settle (the table accounts the
// payload's growth then). key may alias a reused buffer: it is copied
// only when it enters the table.
func (t *topK[P]) add(key []byte, w uint64) *P {
	t.settle()
	if len(key) > maxKeyLen {
		key = key[:maxKeyLen]
	}
	t.distinct.addBytes(key)
	if i, ok := t.index[string(key)]; ok {
		e := &t.entries[i]
		e.count += w
		t.down(int(e.pos))
		t.touched = i
		return &e.p
	}
	cost := int64(len(key)) + t.overhead
	for len(t.entries) > 0 && (len(t.entries) >= t.capacity || t.used+cost > t.budget) {
		if m := &t.entries[t.heap[0]]; t.used-int64(m.cost)+cost <= t.budget {
			return t.replaceMin(key, w, cost)
		}
		t.evictMin(len(t.entries) < t.capacity)
	}
	i := int32(len(t.entries))
	t.entries = append(t.entries, topEntry[P]{key: string(key), count: t.floor + w, err: t.floor, pos: int32(len(t.heap)), cost: int32(cost)})
	t.index[t.entries[i].key] = i
	t.heap = append(t.heap, i)
	t.used += cost
	t.up(len(t.heap) - 1)
	t.touched = i
	return &t.entries[i].p
}

// replaceMin gives the lightest entry's slot to key, the last eviction
// needed to make room for it.
func (t *topK[P]) replaceMin(key []byte, w uint64, cost int64) *P {
	i := t.heap[0]
	e := &t.entries[i]
	byBytes := len(t.entries) < t.capacity
	t.floor = max(t.floor, e.count)
	t.evicted++
	if byBytes {
		t.byBytes++
	}
	t.used += cost - int64(e.cost)
	delete(t.index, e.key)
	*e = topEntry[P]{key: string(key), count: t.floor + w, err: t.floor, pos: 0, cost: int32(cost)}
	t.index[e.key] = i
	t.down(0)
	t.touched = i
	return &e.p
}

// settle accounts the payload of the entry the last add returned and
// evicts the lightest entries while the table is past its budget (never
// the last one).
func (t *topK[P]) settle() {
	if t.touched < 0 {
		return
	}
	e := &t.entries[t.touched]
	t.touched = -1
	cost := int64(len(e.key)) + t.overhead
	if t.size != nil {
		cost += int64(t.size(&e.p))
	}
	t.used += cost - int64(e.cost)
	e.cost = int32(cost)
	for t.used > t.budget && len(t.entries) > 1 {
		t.evictMin(true)
	}
}

// evictMin removes the lightest entry; byBytes says the budget, not the
// capacity, made room.
func (t *topK[P]) evictMin(byBytes bool) {
	i := t.heap[0]
	e := &t.entries[i]
	t.floor = max(t.floor, e.count)
	t.evicted++
	if byBytes {
		t.byBytes++
	}
	t.used -= int64(e.cost)
	delete(t.index, e.key)
	last := len(t.heap) - 1
	t.swap(0, last)
	t.heap = t.heap[:last]
	if last > 0 {
		t.down(0)
	}
	if l := int32(len(t.entries) - 1); i != l {
		t.entries[i] = t.entries[l]
		t.index[t.entries[i].key] = i
		t.heap[t.entries[i].pos] = i
	}
	t.entries[len(t.entries)-1] = topEntry[P]{} // drop the key and payload
	t.entries = t.entries[:len(t.entries)-1]
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

// sorted returns the entries, heaviest first, ties by key. Call settle
// first for the accounting to be current.
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

// full reports whether a bound was hit: some key was evicted.
func (t *topK[P]) full() bool { return t.evicted > 0 }
