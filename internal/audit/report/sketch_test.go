package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestTopKExactUnderCapacity(t *testing.T) {
	tk := newTopK[struct{}](3, 1<<30, nil)
	for _, k := range []string{"a", "b", "a", "c", "a", "b"} {
		tk.add([]byte(k), 1)
	}
	got := ""
	for _, e := range tk.sorted() {
		got += fmt.Sprintf("%s=%d/%d ", e.key, e.count, e.err)
	}
	if want := "a=3/0 b=2/0 c=1/0 "; got != want || tk.full() {
		t.Errorf("got %q full %v, want %q not full", got, tk.full(), want)
	}
}

// Space-Saving guarantees: at most capacity entries, every key heavier
// than total/capacity kept, and count-err <= true count <= count.
func TestTopKGuarantees(t *testing.T) {
	const capacity = 10
	tk := newTopK[int](capacity, 1<<30, nil)
	truth := map[string]uint64{}
	total := 0
	for i := range 20_000 {
		k := fmt.Sprintf("rare%d", i)
		switch {
		case i%5 == 0:
			k = "heavy1"
		case i%7 == 0:
			k = "heavy2"
		}
		truth[k]++
		total++
		*tk.add([]byte(k), 1)++
	}
	if len(tk.entries) != capacity || !tk.full() {
		t.Fatalf("got %d entries (full %v), want %d and full", len(tk.entries), tk.full(), capacity)
	}
	found := map[string]bool{}
	for _, e := range tk.sorted() {
		found[e.key] = true
		if tr := truth[e.key]; e.count < tr || e.count-e.err > tr {
			t.Errorf("%s: got count %d err %d, true count %d", e.key, e.count, e.err, tr)
		}
		if uint64(e.p) > truth[e.key] || uint64(e.p) > e.count {
			t.Errorf("%s: payload counted %d, more than its %d requests", e.key, e.p, truth[e.key])
		}
	}
	for k, n := range truth {
		if n > uint64(total/capacity) && !found[k] {
			t.Errorf("%s (%d of %d) not kept", k, n, total)
		}
	}
}

// With a byte budget and keys of mixed length, the table stays within its
// budget (payload growth included), keeps the heavy keys, and keeps the
// Space-Saving bounds: count-err <= true count <= count, and every key
// heavier than total/k held, k being the entries held at the end.
func TestTopKByteBudget(t *testing.T) {
	const budget = 256 << 10
	tk := newTopK(1000, budget, func(p *[]byte) int { return cap(*p) })
	truth := map[string]uint64{}
	total := 0
	for i := range 30_000 {
		k := fmt.Sprintf("rare%d-%s", i, strings.Repeat("x", i%maxKeyLen))
		switch {
		case i%5 == 0:
			k = "heavy1"
		case i%7 == 0:
			k = "heavy2-" + strings.Repeat("y", maxKeyLen)
		}
		if len(k) > maxKeyLen {
			k = k[:maxKeyLen]
		}
		truth[k]++
		total++
		if p := tk.add([]byte(k), 1); len(*p) < 4096 {
			*p = append(*p, 'p') // payloads grow
		}
		if tk.used > budget+tk.overhead+maxKeyLen+8192 { // at most the last entry unsettled
			t.Fatalf("line %d: %d octets accounted, budget %d", i, tk.used, budget)
		}
	}
	tk.settle()
	held := int64(0)
	for i, e := range tk.entries {
		held += int64(len(e.key)+cap(e.p)) + tk.overhead
		if tk.index[e.key] != int32(i) || tk.heap[e.pos] != int32(i) {
			t.Fatalf("entry %d (%.20s): index %d, heap[%d] = %d", i, e.key, tk.index[e.key], e.pos, tk.heap[e.pos])
		}
		if p := (int(e.pos) - 1) / 2; e.pos > 0 && tk.entries[tk.heap[p]].count > e.count {
			t.Fatalf("entry %d: count %d under its heap parent's %d", i, e.count, tk.entries[tk.heap[p]].count)
		}
	}
	if len(tk.index) != len(tk.entries) || len(tk.heap) != len(tk.entries) {
		t.Fatalf("got %d entries, %d index keys, %d heap slots", len(tk.entries), len(tk.index), len(tk.heap))
	}
	if tk.used > budget || held != tk.used || tk.byBytes == 0 || !tk.full() || len(tk.entries) >= 1000 {
		t.Fatalf("got %d octets accounted (%d held) of %d, %d entries, %d evictions by bytes; want within the budget, all held accounted, evictions by bytes", tk.used, held, budget, len(tk.entries), tk.byBytes)
	}
	found := map[string]bool{}
	for _, e := range tk.sorted() {
		found[e.key] = true
		if tr := truth[e.key]; e.count < tr || e.count-e.err > tr {
			t.Errorf("%.20s: got count %d err %d, true count %d", e.key, e.count, e.err, tr)
		}
	}
	k := len(tk.entries)
	for key, n := range truth {
		if n > uint64(total/k) && !found[key] {
			t.Errorf("%.20s (%d of %d, %d entries) not kept", key, n, total, k)
		}
	}
	if !found["heavy1"] || !found["heavy2-"+strings.Repeat("y", maxKeyLen-len("heavy2-"))] {
		t.Errorf("heavy keys not kept")
	}
}

func TestTopKLongKeyCut(t *testing.T) {
	tk := newTopK[struct{}](2, 1<<30, nil)
	long := make([]byte, 3*maxKeyLen)
	tk.add(long, 1)
	if got := len(tk.entries[0].key); got != maxKeyLen {
		t.Errorf("got a key of %d octets, want %d", got, maxKeyLen)
	}
}

func TestDistinct(t *testing.T) {
	for _, c := range []struct {
		name     string
		d        distinct
		n        int
		exact    bool
		tolerate float64 // relative error allowed
	}{
		{"zero value, under its cap", distinct{}, smallExactCap, true, 0},
		{"zero value, past its cap", distinct{}, 20_000, false, 0.10},
		{"p=12, exact", newDistinct(distinctExactCap, 12), distinctExactCap, true, 0},
		{"p=12, estimate", newDistinct(distinctExactCap, 12), 100_000, false, 0.05},
		{"p=14, estimate", newDistinct(distinctExactCap, 14), 300_000, false, 0.03},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.d
			for i := range c.n {
				s := fmt.Sprintf("host%d.example", i)
				d.addBytes([]byte(s))
				d.addBytes([]byte(s)) // duplicates do not count
			}
			got, exact := d.count()
			if exact != c.exact || math.Abs(float64(got)-float64(c.n)) > c.tolerate*float64(c.n) {
				t.Errorf("got %d (exact %v), want %d (exact %v) within %.0f%%", got, exact, c.n, c.exact, 100*c.tolerate)
			}
		})
	}
}

func TestTimeline(t *testing.T) {
	base := int64(1795370400) // 2026-11-22T08:00:00Z
	for _, c := range []struct {
		name   string
		times  []int64 // offsets from base, seconds
		width  int64
		total  uint64
		bucket int // len(b) at most
	}{
		{"one second", []int64{0, 0}, 1, 2, 1},
		{"half a minute in seconds", []int64{0, 29}, 1, 2, 30},
		{"one minute", []int64{0, 59}, 1, 2, 60},
		{"out of order extends the front", []int64{600, 0, 300}, 5, 3, 121},
		{"four hours widen to 5 min", []int64{0, 4 * 3600}, 300, 2, maxBuckets},
		{"a year widens to days", []int64{0, 365 * 86400}, 7 * 86400, 2, maxBuckets},
		{"before the epoch", []int64{-base - 86400, 0}, 4 * 7 * 86400 * 4 * 4 * 4 * 4 * 4, 2, maxBuckets},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tl timeline
			for _, dt := range c.times {
				tl.add(base+dt, slotAllowed)
			}
			var total uint64
			for _, b := range tl.b {
				total += b[slotAllowed]
			}
			if tl.width > c.width || total != c.total || len(tl.b) > c.bucket || tl.origin%tl.width != 0 {
				t.Errorf("got width %d, %d events in %d buckets from %d; want width <= %d, %d events, at most %d buckets, aligned", tl.width, total, len(tl.b), tl.origin, c.width, c.total, c.bucket)
			}
		})
	}
}

// A narrower timeline lands on a wider grid with its counts in the
// buckets that contain them.
func TestTimelineOnGrid(t *testing.T) {
	var narrow, wide timeline
	base := int64(1795370400)
	narrow.add(base+30, slotDenied)
	narrow.add(base+400, slotDenied)
	for _, dt := range []int64{0, 6 * 3600} {
		wide.add(base+dt, slotAllowed)
	}
	g := commonGrid(&narrow, &wide)
	got := narrow.on(g)
	if g.Width != 300 || len(got) != g.N || got[0][slotDenied] != 1 || got[1][slotDenied] != 1 {
		t.Errorf("got grid %+v, buckets %v; want 300 s wide, one denial in each of the first two", g, got[:2])
	}
}
