package memo

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// op is one step of a table test: put (k, v) or get k, and what follows.
type op struct {
	put     bool
	k       string
	v       int
	want    int  // get: the value, when ok
	ok      bool // get: whether k is there
	wantLen int  // after the step
}

func TestMemo(t *testing.T) {
	size := func(v int) int64 { return int64(v) }
	tests := []struct {
		name string
		m    *Memo[string, int]
		ops  []op
	}{
		{"entries", New[string, int](2), []op{
			{put: true, k: "a", v: 1, wantLen: 1},
			{put: true, k: "b", v: 2, wantLen: 2},
			{put: true, k: "a", v: 3, wantLen: 2}, // not new: nothing forgotten
			{k: "a", want: 3, ok: true, wantLen: 2},
			{put: true, k: "c", v: 4, wantLen: 1}, // new and full: forgets all
			{k: "a", wantLen: 1},
			{k: "c", want: 4, ok: true, wantLen: 1},
		}},
		{"size", NewSized[string](10, 5, size), []op{
			{put: true, k: "a", v: 2, wantLen: 1},
			{put: true, k: "b", v: 3, wantLen: 2},
			{put: true, k: "b", v: 1, wantLen: 2}, // replaced: total 3
			{put: true, k: "c", v: 2, wantLen: 3}, // total 5
			{put: true, k: "d", v: 1, wantLen: 1}, // 6 > 5: forgets all
			{put: true, k: "e", v: 9, wantLen: 1}, // larger than the bound: kept alone
			{k: "e", want: 9, ok: true, wantLen: 1},
		}},
		{"size and entries", NewSized[string](2, 100, size), []op{
			{put: true, k: "a", v: 1, wantLen: 1},
			{put: true, k: "b", v: 1, wantLen: 2},
			{put: true, k: "c", v: 1, wantLen: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, o := range tt.ops {
				if o.put {
					tt.m.Put(o.k, o.v)
				} else if v, ok := tt.m.Get(o.k); ok != o.ok || ok && v != o.want {
					t.Errorf("step %d: Get(%q) = %d, %v; want %d, %v", i, o.k, v, ok, o.want, o.ok)
				}
				if got := tt.m.Len(); got != o.wantLen {
					t.Errorf("step %d: Len() = %d, want %d", i, got, o.wantLen)
				}
				if tt.m.size != nil {
					var sum int64
					for _, v := range tt.m.m {
						sum += int64(v)
					}
					if tt.m.Size() != sum {
						t.Errorf("step %d: Size() = %d, want %d", i, tt.m.Size(), sum)
					}
				}
			}
		})
	}
}

func TestInterner(t *testing.T) {
	in := NewInterner(2, 3)
	a := in.String([]byte("abc"))
	if b := in.String([]byte("abc")); unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("a repeated value is not shared")
	}
	if n := testing.AllocsPerRun(100, func() { in.String([]byte("abc")) }); n != 0 {
		t.Errorf("a kept value allocates %v times", n)
	}
	in.String([]byte("abcd")) // too long: not kept
	if in.m.Len() != 1 {
		t.Errorf("Len() = %d after a long value, want 1", in.m.Len())
	}
	in.String([]byte("x"))
	in.String([]byte("y")) // full: forgets all
	if in.m.Len() != 1 {
		t.Errorf("Len() = %d past the bound, want 1", in.m.Len())
	}
	var none *Interner
	if none.String([]byte("abc")) != "abc" {
		t.Errorf("the nil Interner changes values")
	}
}

type lruOp struct {
	add         bool
	k           string
	v           int
	get         bool // get (marks used) rather than peek, when !add
	want        int
	ok          bool
	wantEvicted []string
	wantOrder   []string // oldest first, after the step
}

func TestLRU(t *testing.T) {
	size := func(_ string, v int) int64 { return int64(v) }
	tests := []struct {
		name string
		l    *LRU[string, int]
		ops  []lruOp
	}{
		{"entries", NewLRU[string, int](2, 0, nil), []lruOp{
			{add: true, k: "a", v: 1, wantOrder: []string{"a"}},
			{add: true, k: "b", v: 2, wantOrder: []string{"a", "b"}},
			{get: true, k: "a", want: 1, ok: true, wantOrder: []string{"b", "a"}},
			{k: "b", want: 2, ok: true, wantOrder: []string{"b", "a"}}, // peek
			{add: true, k: "c", v: 3, wantEvicted: []string{"b"}, wantOrder: []string{"a", "c"}},
			{add: true, k: "a", v: 4, wantOrder: []string{"c", "a"}},
			{get: true, k: "b", wantOrder: []string{"c", "a"}},
		}},
		{"size", NewLRU(10, 5, size), []lruOp{
			{add: true, k: "a", v: 2, wantOrder: []string{"a"}},
			{add: true, k: "b", v: 2, wantOrder: []string{"a", "b"}},
			{add: true, k: "c", v: 2, wantEvicted: []string{"a"}, wantOrder: []string{"b", "c"}},
			{add: true, k: "b", v: 4, wantEvicted: []string{"c"}, wantOrder: []string{"b"}},
			{add: true, k: "d", v: 9, wantEvicted: []string{"b"}, wantOrder: []string{"d"}}, // kept alone
			{add: true, k: "e", v: 1, wantEvicted: []string{"d"}, wantOrder: []string{"e"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, o := range tt.ops {
				switch {
				case o.add:
					if ev := tt.l.Add(o.k, o.v, nil); !slices.Equal(ev, o.wantEvicted) {
						t.Errorf("step %d: Add(%q) evicted %q, want %q", i, o.k, ev, o.wantEvicted)
					}
				default:
					get := tt.l.Peek
					if o.get {
						get = tt.l.Get
					}
					if v, ok := get(o.k); ok != o.ok || ok && v != o.want {
						t.Errorf("step %d: get %q = %d, %v; want %d, %v", i, o.k, v, ok, o.want, o.ok)
					}
				}
				if got := order(tt.l); !slices.Equal(got, o.wantOrder) {
					t.Errorf("step %d: order %q, want %q", i, got, o.wantOrder)
				}
				var sum int64
				for _, n := range tt.l.m {
					if tt.l.size != nil {
						sum += int64(n.val)
					}
				}
				if tt.l.Size() != sum || tt.l.Len() != len(o.wantOrder) {
					t.Errorf("step %d: Size() = %d, Len() = %d; want %d, %d", i, tt.l.Size(), tt.l.Len(), sum, len(o.wantOrder))
				}
			}
		})
	}
}

// order returns the keys of l, oldest first, checking Oldest.
func order(l *LRU[string, int]) []string {
	var out []string
	for n := l.root.next; n != &l.root; n = n.next {
		out = append(out, n.key)
	}
	if k, _, ok := l.Oldest(); ok != (len(out) > 0) || ok && k != out[0] {
		out = append(out, "(Oldest disagrees)")
	}
	return out
}

func TestLRURemove(t *testing.T) {
	l := NewLRU[string, int](3, 0, nil)
	for i, k := range []string{"a", "b", "c"} {
		l.Add(k, i, nil)
	}
	if !l.Remove("b") || l.Remove("b") || l.Len() != 2 {
		t.Fatalf("Remove: Len() = %d", l.Len())
	}
	if got := order(l); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("order %q after Remove", got)
	}
}

// TestSyncRace runs readers and writers at once; run with -race.
func TestSyncRace(t *testing.T) {
	s := NewSync[int, string](64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := (g*7919 + i) % 200
				if v, ok := s.Get(k); ok && v != fmt.Sprint(k) {
					t.Errorf("Get(%d) = %q", k, v)
					return
				}
				s.Put(k, fmt.Sprint(k))
				if n := s.Len(); n > 64 {
					t.Errorf("Len() = %d past the bound", n)
					return
				}
			}
		}()
	}
	wg.Wait()
}
