package verify_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// writeCheckpointed writes n chained lines through a Writer with a
// checkpoint every 5 lines and at Close, and returns the log's path, the
// checkpoint log's path and the head.
func writeCheckpointed(t *testing.T, n int, key []byte) (logPath, ckPath string) {
	t.Helper()
	dir := t.TempDir()
	logPath, ckPath = filepath.Join(dir, "audit.log"), filepath.Join(dir, "checkpoints.log")
	f, prev, err := OpenFile(FileOptions{Path: logPath})
	if err != nil {
		t.Fatal(err)
	}
	ck, err := OpenCheckpoints(CheckpointOptions{Path: ckPath, EveryLines: 5, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	w := NewWriter(f, Options{Chain: true, Prev: prev, Checkpoints: ck,
		Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }})
	for i := range n {
		ts := clock.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)
		if _, err := fmt.Fprintf(w, `{"time":%q,"level":"info","message":"line %d"}`+"\n", ts, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return logPath, ckPath
}

// TestCheckpointsAnchorTheChain: with checkpoints, a log cut at its end,
// a middle line edited with the chain recomputed after it, and a forged
// append each fail verify; the untouched log passes, and -head pins its
// exact end.
func TestCheckpointsAnchorTheChain(t *testing.T) {
	key := []byte("checkpoint key")
	logPath, ckPath := writeCheckpointed(t, 23, key)
	cks, err := ReadCheckpoints(ckPath, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(cks) != 5 || cks[4].Lines != 23 {
		t.Fatalf("got %d checkpoints (last %+v), want 5: every 5 lines and at Close (23 lines)", len(cks), cks[len(cks)-1])
	}
	orig, _ := os.ReadFile(logPath)
	all := strings.SplitAfter(string(orig), "\n")
	head := sha256.Sum256([]byte(all[len(all)-2]))
	for _, tt := range []struct {
		name   string
		edit   func([]string) []string
		head   bool
		wantOK bool
	}{
		{"untouched", nil, true, true},
		{"tail deleted", func(l []string) []string { return l[:21] }, false, false},
		{"middle edited, rechained", func(l []string) []string {
			l[7] = strings.Replace(l[7], "line 7", "line 7 edited", 1)
			return rechain(l, 7)
		}, false, false},
		{"forged append, rechained", func(l []string) []string {
			l = append(l[:23], strings.Replace(l[22], "line 22", "forged", 1), "")
			return rechain(l, 23)
		}, true, false},
		{"forged append, no head given", func(l []string) []string {
			l = append(l[:23], strings.Replace(l[22], "line 22", "forged", 1), "")
			return rechain(l, 23)
		}, false, true}, // the window after the last checkpoint: what -head is for
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(logPath, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				editLines(t, logPath, tt.edit)
			}
			o := verify.VerifyOptions{Checkpoints: cks}
			if tt.head {
				o.Head = &head
			}
			var problems []string
			o.Report = func(p verify.Problem) { problems = append(problems, p.String()) }
			res, err := verify.Verify([]string{logPath}, o)
			if err != nil {
				t.Fatal(err)
			}
			if ok := res.OK(true); ok != tt.wantOK {
				t.Errorf("OK %v, want %v; problems %q", ok, tt.wantOK, problems)
			}
		})
	}
}

// TestCheckpointHMAC: a checkpoint log read with the wrong key, or edited,
// is refused.
func TestCheckpointHMAC(t *testing.T) {
	_, ckPath := writeCheckpointed(t, 6, []byte("right"))
	if _, err := ReadCheckpoints(ckPath, []byte("wrong")); !errors.Is(err, ErrCheckpointMAC) {
		t.Errorf("wrong key: got %v, want ErrCheckpointMAC", err)
	}
	b, _ := os.ReadFile(ckPath)
	forged := strings.Replace(string(b), `"lines":5`, `"lines":4`, 1)
	if err := os.WriteFile(ckPath, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoints(ckPath, []byte("right")); !errors.Is(err, ErrCheckpointMAC) {
		t.Errorf("edited checkpoint: got %v, want ErrCheckpointMAC", err)
	}
	if _, err := ReadCheckpoints(ckPath, nil); err != nil {
		t.Errorf("no key: %v", err)
	}
}
