package live

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// auditLine is an audit line of n octets or more, numbered i.
func auditLine(i, n int) []byte {
	l := fmt.Appendf(nil, `{"i":%d,"decision":"allow","url":"http://example.com/%s"}`, i, bytes.Repeat([]byte("a"), max(n-60, 1)))
	return l
}

// Lines of random sizes come out of the ring as they went in, in order
// and numbered without gaps; a reader that falls behind is told how many
// it missed, and reads on from the oldest kept.
func TestRingKeepsTheMostRecentLines(t *testing.T) {
	r := NewRing(MinRingBytes)
	rnd := rand.New(rand.NewPCG(1, 2))
	put := map[uint64][]byte{}
	rd := r.NewReader(1)
	got := 0
	for i := range 50_000 {
		l := auditLine(i, 100+rnd.IntN(3000))
		if rnd.IntN(1000) == 0 {
			l = auditLine(i, 60_000) // the longest audit lines
		}
		seq := r.Put(l, sha256.Sum256(l))
		if seq != uint64(i+1) {
			t.Fatalf("line %d numbered %d", i, seq)
		}
		put[seq] = l
		if i%3000 != 0 && i < 40_000 {
			continue // the reader lags, then catches up at the end
		}
		for {
			ents, skipped := rd.Read()
			got += int(skipped)
			if len(ents) == 0 {
				break
			}
			for _, e := range ents {
				if !bytes.Equal(e.Line, put[e.Seq]) || e.Sum != sha256.Sum256(put[e.Seq]) {
					t.Fatalf("line %d read back as %.40q", e.Seq, e.Line)
				}
				got++
			}
		}
	}
	if got != 50_000 {
		t.Errorf("read and skipped %d lines, want 50000", got)
	}
	oldest, next := r.Bounds()
	if next != 50_001 || next-oldest < 300 || next-oldest > uint64(len(r.spans)) {
		t.Errorf("bounds [%d, %d): want the most recent lines that fit in %d octets", oldest, next, len(r.arena))
	}
	if l, ok := r.Find(sha256.Sum256(put[next-1])); !ok || !bytes.Equal(l, put[next-1]) {
		t.Errorf("Find(the newest line's sum) = %q, %v", l, ok)
	}
	if _, ok := r.Find(sha256.Sum256(put[1])); ok {
		t.Error("Find found the first line, which the ring gave up long ago")
	}
}

// A line too long for the ring is counted as skipped, never copied over
// its neighbours.
func TestRingSkipsALineTooLong(t *testing.T) {
	r := NewRing(MinRingBytes)
	r.Put([]byte(`{"a":1}`), [32]byte{})
	r.Put(make([]byte, MinRingBytes/2), [32]byte{})
	r.Put([]byte(`{"a":3}`), [32]byte{})
	ents, skipped := r.NewReader(1).Read()
	if skipped != 1 || len(ents) != 2 || string(ents[0].Line) != `{"a":1}` || string(ents[1].Line) != `{"a":3}` || ents[1].Seq != 3 {
		t.Errorf("read %d lines (%+v), skipped %d; want lines 1 and 3, 1 skipped", len(ents), ents, skipped)
	}
}

// With nobody subscribed, keeping a line allocates nothing: the audit
// path pays a copy and a short lock.
func TestTapAllocatesNothing(t *testing.T) {
	h := New(Options{MaxSubscribers: 1})
	l := auditLine(1, 700)
	sum := sha256.Sum256(l)
	if n := testing.AllocsPerRun(10_000, func() { h.Tap(l, sum) }); n != 0 {
		t.Errorf("Tap with no subscriber: %v allocations a line, want 0", n)
	}
	s, err := h.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer h.unsubscribe(s)
	if n := testing.AllocsPerRun(10_000, func() { h.Tap(l, sum) }); n != 0 {
		t.Errorf("Tap with a subscriber: %v allocations a line, want 0", n)
	}
}

// BenchmarkTap is the audit path's cost of the live view, a 700-octet
// line: with no subscriber, and with 1 and 5 that are woken.
func BenchmarkTap(b *testing.B) {
	for _, subs := range []int{0, 1, 5} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			h := New(Options{MaxSubscribers: 5})
			for range subs {
				if _, err := h.subscribe(); err != nil {
					b.Fatal(err)
				}
			}
			l := auditLine(1, 700)
			sum := sha256.Sum256(l)
			b.ReportAllocs()
			b.SetBytes(int64(len(l)))
			for b.Loop() {
				h.Tap(l, sum)
			}
		})
	}
}
