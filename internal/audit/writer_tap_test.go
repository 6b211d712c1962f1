package audit

import (
	"bytes"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// tapped records what Options.Tap is given.
type tapped struct {
	mu    sync.Mutex
	lines [][]byte
	sums  [][sha256.Size]byte
}

func (r *tapped) tap(line []byte, sum [sha256.Size]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, bytes.Clone(line))
	r.sums = append(r.sums, sum)
}

// TestTapSeesTheLogAsWritten: Tap is given every line of the log, in the
// log's order, as written ("prev" included), each with its SHA-256 when
// chaining (the next line's prev) and a zero sum when not; lines of a
// write that failed are never given, and the lost-lines marker is.
func TestTapSeesTheLogAsWritten(t *testing.T) {
	for _, chain := range []bool{true, false} {
		disk := testkit.NewFullDisk(1 << 20)
		rec := &tapped{}
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		w := NewWriter(disk, Options{Chain: chain, Tap: rec.tap, OnWriteError: "continue", Now: func() time.Time { return now }})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for j := range 50 {
					_, _ = w.Write(line(g, j))
				}
			})
		}
		wg.Wait()
		disk.SetRoom(disk.Len() + 5) // the next write fails
		if _, err := w.Write(line(9, 0)); err == nil {
			t.Fatal("a write on a full disk succeeded")
		}
		disk.SetRoom(1 << 20)
		if _, err := w.Write(line(9, 1)); err != nil { // with the marker
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		logLines := splitLines(disk.Bytes())
		if len(rec.lines) != len(logLines) || len(logLines) != 8*50+2 {
			t.Fatalf("chain %v: tapped %d lines, the log has %d, want %d", chain, len(rec.lines), len(logLines), 8*50+2)
		}
		for i, l := range logLines {
			if !bytes.Equal(rec.lines[i], l) {
				t.Fatalf("chain %v: tapped line %d is %q, the log's %q", chain, i, rec.lines[i], l)
			}
			want := [sha256.Size]byte{}
			if chain {
				want = sha256.Sum256(append(bytes.Clone(l), '\n'))
			}
			if rec.sums[i] != want {
				t.Fatalf("chain %v: line %d tapped with sum %x, want %x", chain, i, rec.sums[i], want)
			}
		}
		if !bytes.Contains(rec.lines[len(rec.lines)-2], []byte(MarkerLostLines)) {
			t.Errorf("chain %v: the line before the last is %q, want the lost-lines marker", chain, rec.lines[len(rec.lines)-2])
		}
	}
}
