package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fullDisk is an output with room for a set number of octets: a write past
// it stores what fits and fails with ENOSPC, as write(2) on a full file
// system does. It can take octets back (Unwriter) unless noUnwrite.
type fullDisk struct {
	buf       bytes.Buffer
	room      int
	noUnwrite bool
}

func (d *fullDisk) Write(p []byte) (int, error) {
	n := min(len(p), max(d.room-d.buf.Len(), 0))
	d.buf.Write(p[:n])
	if n < len(p) {
		return n, fmt.Errorf("write audit.log: %w", syscall.ENOSPC)
	}
	return n, nil
}

func (d *fullDisk) Unwrite(n int) error {
	if d.noUnwrite {
		return errors.New("cannot truncate")
	}
	d.buf.Truncate(d.buf.Len() - n)
	return nil
}

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
			disk := &fullDisk{room: 1 << 20}
			var reported []error
			now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
			w := NewWriter(disk, Options{Chain: tt.chain, OnWriteError: "refuse",
				OnError: func(err error) { reported = append(reported, err) }, Now: func() time.Time { return now }})
			if _, err := w.Write(line(0, 0)); err != nil {
				t.Fatal(err)
			}
			disk.room = disk.buf.Len() + 10 // the next line fits only in part
			for j := 1; j <= 3; j++ {
				if _, err := w.Write(line(0, j)); !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("write %d on a full disk: got %v, want ENOSPC", j, err)
				}
			}
			if got := splitLines(disk.buf.Bytes()); len(got) != 1 || !json.Valid(got[0]) {
				t.Fatalf("log after failed writes: %q, want the first line alone", disk.buf.Bytes())
			}
			if !w.Failing() || len(reported) != 3 {
				t.Errorf("Failing %v, %d errors reported; want true, 3", w.Failing(), len(reported))
			}
			disk.room = 1 << 20 // space freed
			if _, err := w.Write(line(0, 4)); err != nil {
				t.Fatalf("write after space returned: %v", err)
			}
			lines := splitLines(disk.buf.Bytes())
			if len(lines) != 3 {
				t.Fatalf("got %d lines, want 3 (first, marker, after):\n%s", len(lines), disk.buf.Bytes())
			}
			var m map[string]any
			if err := json.Unmarshal(lines[1], &m); err != nil || m[MarkerLostLines] != 3.0 ||
				m[MarkerOnWriteError] != "refuse" || m[MarkerLostSince] != "2026-11-24T12:00:00Z" {
				t.Errorf("marker line %s (%v): want lost_lines 3, on_write_error refuse, lost_since", lines[1], err)
			}
			if tt.chain {
				if i := checkChain(t, lines, [32]byte{}); i >= 0 {
					t.Errorf("chain broken at line %d:\n%s", i, disk.buf.Bytes())
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
	disk := &fullDisk{room: 10, noUnwrite: true}
	w := NewWriter(disk, Options{Chain: true})
	if _, err := w.Write(line(0, 0)); err == nil {
		t.Fatal("write past the room: no error")
	}
	disk.room = 1 << 20
	if _, err := w.Write(line(0, 1)); err == nil {
		t.Fatal("write while the cut octets are still there: no error")
	}
	disk.noUnwrite = false
	if _, err := w.Write(line(0, 2)); err != nil {
		t.Fatalf("write once the cut octets can go: %v", err)
	}
	lines := splitLines(disk.buf.Bytes())
	if len(lines) != 2 || checkChain(t, lines, [32]byte{}) >= 0 {
		t.Errorf("log %q: want the marker and the line, chained", disk.buf.Bytes())
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
