package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

func splitLines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// TestWriteErrorNeverAcknowledged: a write that fails mid-line returns the
// error to its caller, leaves no octet of the line in the log and does not
// advance the chain; once space returns, writing resumes by itself with a
// lost-lines marker, and the chain holds over the whole log.
func TestWriteErrorNeverAcknowledged(t *testing.T) {
	for _, tt := range []struct {
		name  string
		chain bool
	}{{"chained", true}, {"unchained", false}} {
		t.Run(tt.name, func(t *testing.T) {
			disk := testkit.NewFullDisk(1 << 20)
			var reported []error
			now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			w := NewWriter(disk, Options{Chain: tt.chain, OnWriteError: "refuse",
				OnError: func(err error) { reported = append(reported, err) }, Now: func() time.Time { return now }})
			if _, err := w.Write(line(0, 0)); err != nil {
				t.Fatal(err)
			}
			disk.SetRoom(disk.Len() + 10) // the next line fits only in part
			for j := 1; j <= 3; j++ {
				if _, err := w.Write(line(0, j)); !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("write %d on a full disk: got %v, want ENOSPC", j, err)
				}
			}
			if got := splitLines(disk.Bytes()); len(got) != 1 || !json.Valid(got[0]) {
				t.Fatalf("log after failed writes: %q, want the first line alone", disk.Bytes())
			}
			if !w.Failing() || len(reported) != 3 {
				t.Errorf("Failing %v, %d errors reported; want true, 3", w.Failing(), len(reported))
			}
			disk.SetRoom(1 << 20) // space freed
			if _, err := w.Write(line(0, 4)); err != nil {
				t.Fatalf("write after space returned: %v", err)
			}
			lines := splitLines(disk.Bytes())
			if len(lines) != 3 {
				t.Fatalf("got %d lines, want 3 (first, marker, after):\n%s", len(lines), disk.Bytes())
			}
			var m map[string]any
			if err := json.Unmarshal(lines[1], &m); err != nil || m[MarkerLostLines] != 3.0 ||
				m[MarkerOnWriteError] != "refuse" || m[MarkerLostSince] != "2026-11-24T12:00:00Z" {
				t.Errorf("marker line %s (%v): want lost_lines 3, on_write_error refuse, lost_since", lines[1], err)
			}
			if tt.chain {
				if i := checkChain(t, lines, [32]byte{}); i >= 0 {
					t.Errorf("chain broken at line %d:\n%s", i, disk.Bytes())
				}
			}
			if s := w.Stats(); w.Failing() || s.WriteErrors != 3 || s.LostLines != 3 {
				t.Errorf("after recovery: Failing %v, %+v; want false, 3 write errors, 3 lost lines", w.Failing(), s)
			}
		})
	}
}

// TestPartialWriteCannotBeTakenBack: when the octets of a failed write
// cannot be removed, the next write tries again first, and a log it
// cannot repair gets no line merged onto the cut one.
func TestPartialWriteCannotBeTakenBack(t *testing.T) {
	disk := testkit.NewFullDisk(10)
	disk.NoUnwrite(true)
	w := NewWriter(disk, Options{Chain: true})
	if _, err := w.Write(line(0, 0)); err == nil {
		t.Fatal("write past the room: no error")
	}
	disk.SetRoom(1 << 20)
	if _, err := w.Write(line(0, 1)); err == nil {
		t.Fatal("write while the cut octets are still there: no error")
	}
	disk.NoUnwrite(false)
	if _, err := w.Write(line(0, 2)); err != nil {
		t.Fatalf("write once the cut octets can go: %v", err)
	}
	lines := splitLines(disk.Bytes())
	if len(lines) != 2 || checkChain(t, lines, [32]byte{}) >= 0 {
		t.Errorf("log %q: want the marker and the line, chained", disk.Bytes())
	}
}

// TestLogFileUnwrite: the log file takes back exactly the octets asked.
func TestLogFileUnwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	f, _, err := OpenFile(FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("{\"a\":1}\n{\"b\":")); err != nil {
		t.Fatal(err)
	}
	if err := f.(Unwriter).Unwrite(5); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("{\"c\":3}\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"a\":1}\n{\"c\":3}\n" {
		t.Errorf("file holds %q", b)
	}
}

// TestRecover: while the disk is full, Recover fails like a write and
// leaves no octet; once space returns it writes the lost-lines marker
// alone, chained, and the log is no longer failing; on a log that is not
// failing it writes nothing.
func TestRecover(t *testing.T) {
	disk := testkit.NewFullDisk(1 << 20)
	w := NewWriter(disk, Options{Chain: true, OnWriteError: "refuse"})
	if err := w.Recover(); err != nil || w.Stats().Writes != 0 {
		t.Fatalf("Recover on a healthy log: %v, %d writes; want nil, none", err, w.Stats().Writes)
	}
	if _, err := w.Write(line(0, 0)); err != nil {
		t.Fatal(err)
	}
	disk.SetRoom(disk.Len() + 10)
	if _, err := w.Write(line(0, 1)); err == nil {
		t.Fatal("write on a full disk: no error")
	}
	size := disk.Len()
	if err := w.Recover(); !errors.Is(err, syscall.ENOSPC) || !w.Failing() || disk.Len() != size {
		t.Fatalf("Recover on a full disk: %v, Failing %v, %d octets (was %d); want ENOSPC, true, no change", err, w.Failing(), disk.Len(), size)
	}
	disk.SetRoom(1 << 20) // space freed
	if err := w.Recover(); err != nil || w.Failing() {
		t.Fatalf("Recover once space returned: %v, Failing %v; want nil, false", err, w.Failing())
	}
	if _, err := w.Write(line(0, 2)); err != nil {
		t.Fatal(err)
	}
	lines := splitLines(disk.Bytes())
	var m map[string]any
	if len(lines) != 3 || json.Unmarshal(lines[1], &m) != nil || m[MarkerLostLines] != 1.0 {
		t.Fatalf("log %s: want the first line, a marker of 1 lost line, the last line", disk.Bytes())
	}
	if i := checkChain(t, lines, [32]byte{}); i >= 0 {
		t.Errorf("chain broken at line %d:\n%s", i, disk.Bytes())
	}
	if s := w.Stats(); s.WriteErrors != 1 || s.LostLines != 1 || s.Writes != 5 {
		t.Errorf("stats %+v: want 5 writes, 1 write error (the line's; a failed Recover is not counted), 1 lost line", s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Recover(); err != nil { // not failing: nothing to do, even closed
		t.Errorf("Recover after Close on a healthy log: %v", err)
	}
}

// TestRecoverConcurrent: callers that Recover and Write at once while
// space comes and goes leave whole, chained lines, and every line that
// Write acknowledged is in the log.
func TestRecoverConcurrent(t *testing.T) {
	disk := testkit.NewFullDisk(0)
	w := NewWriter(disk, Options{Chain: true})
	var wg sync.WaitGroup
	var acked atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if w.Recover() == nil {
					if _, err := w.Write(line(g, j)); err == nil {
						acked.Add(1)
					}
				}
			}
		}()
	}
	for i := range 20 {
		disk.SetRoom(map[bool]int{true: 1 << 20, false: 0}[i%2 == 1])
		time.Sleep(time.Millisecond)
	}
	disk.SetRoom(1 << 20)
	wg.Wait()
	if err := w.Recover(); err != nil {
		t.Fatal(err)
	}
	lines := splitLines(disk.Bytes())
	n := 0
	for _, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("not one JSON object: %q", l)
		}
		if !bytes.Contains(l, []byte(MarkerLostLines)) {
			n++
		}
	}
	if int64(n) != acked.Load() {
		t.Errorf("%d lines in the log, %d acknowledged", n, acked.Load())
	}
	if i := checkChain(t, lines, [32]byte{}); i >= 0 {
		t.Errorf("chain broken at line %d", i)
	}
}
