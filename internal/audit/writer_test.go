package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// slowWriter records each write and takes a while per write, so that
// concurrent lines queue up behind it.
type slowWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	delay  time.Duration
	gate   chan struct{} // when not nil, each write waits for a receive
}

func (s *slowWriter) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func (s *slowWriter) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

func line(i, j int) []byte { return []byte(fmt.Sprintf(`{"g":%d,"i":%d}`+"\n", i, j)) }

// TestConcurrentLinesWholeAndBatched writes from many goroutines at once:
// every line arrives whole, once, and lines share writes.
func TestConcurrentLinesWholeAndBatched(t *testing.T) {
	out := &slowWriter{delay: 200 * time.Microsecond}
	w := NewWriter(out, Options{Chain: true})
	const G, N = 32, 200
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range N {
				if _, err := w.Write(line(g, j)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != G*N {
		t.Fatalf("got %d lines, want %d", len(lines), G*N)
	}
	seen := map[[2]int]bool{}
	for _, l := range lines {
		var m struct{ G, I int }
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %q is not whole JSON: %v", l, err)
		}
		seen[[2]int{m.G, m.I}] = true
	}
	if len(seen) != G*N {
		t.Errorf("got %d distinct lines, want %d", len(seen), G*N)
	}
	if at := checkChain(t, lines, [32]byte{}); at >= 0 {
		t.Errorf("chain broken at line %d", at+1)
	}
	st := w.Stats()
	if st.Lines != G*N || st.Writes >= st.Lines/2 {
		t.Errorf("stats %+v: want %d lines in fewer than half as many writes", st, G*N)
	}
	t.Logf("%d lines in %d writes: %.1f lines per write", st.Lines, st.Writes, float64(st.Lines)/float64(st.Writes))
}

// checkChain returns the index of the first line whose prev is not the
// SHA-256 of the line before it (start for the first), or -1.
func checkChain(t *testing.T, lines [][]byte, start [32]byte) int {
	t.Helper()
	prev := start
	for i, l := range lines {
		var m struct{ Prev string }
		if err := json.Unmarshal(l, &m); err != nil || m.Prev != hex.EncodeToString(prev[:]) {
			return i
		}
		prev = sha256.Sum256(append(bytes.Clone(l), '\n'))
	}
	return -1
}

// TestBackPressure: a stuck underlying writer makes callers wait once the
// queue is full; nothing is dropped, and everything arrives when it
// unsticks.
func TestBackPressure(t *testing.T) {
	out := &slowWriter{gate: make(chan struct{})}
	w := NewWriter(out, Options{MaxPending: 64})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = w.Write(line(i, 0)) }()
	}
	time.Sleep(50 * time.Millisecond)
	w.mu.Lock()
	pending := len(w.pending)
	w.mu.Unlock()
	if pending > 64 {
		t.Errorf("%d octets queued behind a stuck writer; want at most MaxPending (64)", pending)
	}
	close(out.gate) // every write goes through from now on
	wg.Wait()
	w.Close()
	if n := bytes.Count(out.bytes(), []byte("\n")); n != 20 {
		t.Errorf("got %d lines, want 20", n)
	}
}

func TestWriteAfterCloseAndPartialLines(t *testing.T) {
	w := NewWriter(&slowWriter{}, Options{})
	if _, err := w.Write([]byte(`{"a":1}`)); err == nil {
		t.Error("a write without its newline was accepted")
	}
	w.Close()
	if _, err := w.Write(line(0, 0)); err != ErrClosed {
		t.Errorf("write after Close: got %v, want ErrClosed", err)
	}
}

func TestAppendPrev(t *testing.T) {
	var p [32]byte
	p[0] = 0xab
	h := hex.EncodeToString(p[:])
	tests := []struct{ in, want string }{
		{`{"a":1}` + "\n", `{"a":1,"prev":"` + h + `"}` + "\n"},
		{`{}` + "\n", `{"prev":"` + h + `"}` + "\n"},
		{"not json\n", "not json\n"},
	}
	for _, tt := range tests {
		if got := string(AppendPrev(nil, []byte(tt.in), p)); got != tt.want {
			t.Errorf("AppendPrev(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestOpenFileRepairsCutLine: a log left without its final newline (a
// crash mid-write) gets one before the first new line, and the chain
// continues from the last line in the file.
func TestOpenFileRepairsCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	old := `{"n":1}` + "\n" + `{"n":2,"user_agent":"aaaa`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	f, prev, err := OpenFile(FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256([]byte(`{"n":2,"user_agent":"aaaa` + "\n")); prev != want {
		t.Errorf("prev = %x, want the SHA-256 of the repaired last line", prev)
	}
	w := NewWriter(f, Options{Chain: true, Prev: prev})
	if _, err := w.Write([]byte(`{"n":3}` + "\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("got %d lines %q, want 3", len(lines), b)
	}
	var m map[string]any
	if err := json.Unmarshal(lines[2], &m); err != nil || m["n"] != float64(3) {
		t.Errorf("the first new line %q is not whole: %v", lines[2], err)
	}
	if at := checkChain(t, lines[2:], prev); at >= 0 {
		t.Errorf("new line does not chain to the repaired last line")
	}
}

// TestChainAcrossRotation: the first line of a rotated-to file chains to
// the last line of the old one, also after a restart.
func TestChainAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	f, prev, _ := OpenFile(FileOptions{Path: path, MaxSizeMB: 1})
	w := NewWriter(f, Options{Chain: true, Prev: prev})
	pad := bytes.Repeat([]byte("x"), 1000)
	for i := range 1200 { // about 1.2 MiB: one rotation
		if _, err := w.Write([]byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`+"\n", i, pad))); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, prev, _ = OpenFile(FileOptions{Path: path, MaxSizeMB: 1})
	w = NewWriter(f, Options{Chain: true, Prev: prev})
	_, _ = w.Write([]byte(`{"i":"after restart"}` + "\n"))
	w.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "audit-*.log"))
	if len(files) != 1 {
		t.Fatalf("backups %v; want one rotation", files)
	}
	var all [][]byte
	for _, name := range []string{files[0], path} {
		b, _ := os.ReadFile(name)
		all = append(all, bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))...)
	}
	if len(all) != 1201 {
		t.Fatalf("got %d lines, want 1201", len(all))
	}
	if at := checkChain(t, all, [32]byte{}); at >= 0 {
		t.Errorf("chain broken at line %d of %d", at+1, len(all))
	}
}

// heldWriter holds its first write until release is closed, and says
// when that write has started.
type heldWriter struct {
	slowWriter
	once             sync.Once
	started, release chan struct{}
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.once.Do(func() {
		close(h.started)
		<-h.release
	})
	return h.slowWriter.Write(p)
}

// TestQueuedLinesShareTheNextWrite: a lone line is written by its own
// caller, at once; lines whose callers arrive while that write is in
// progress all go out together in the next one, written by one of them.
func TestQueuedLinesShareTheNextWrite(t *testing.T) {
	out := &heldWriter{started: make(chan struct{}), release: make(chan struct{})}
	w := NewWriter(out, Options{Chain: true})
	first := make(chan error)
	go func() {
		_, err := w.Write(line(0, 0))
		first <- err
	}()
	<-out.started
	const N = 20
	var wg sync.WaitGroup
	for j := 1; j <= N; j++ {
		wg.Go(func() {
			if _, err := w.Write(line(1, j)); err != nil {
				t.Error(err)
			}
		})
	}
	for w.Stats().Lines != N+1 { // every line is queued behind the first write
		runtime.Gosched()
	}
	close(out.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if s := w.Stats(); s.Writes != 2 {
		t.Errorf("got %d writes for 1 + %d queued lines, want 2", s.Writes, N)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != N+1 {
		t.Fatalf("got %d lines, want %d", len(lines), N+1)
	}
	if i := checkChain(t, lines, [32]byte{}); i >= 0 {
		t.Errorf("chain broken at line %d", i)
	}
}

// TestGroupWindowOneCPU: on one CPU, where no line can arrive while a
// write is in progress, callers that write within GroupWindow of the last
// write let the others queue their lines first, so that writes carry many
// lines; every line is still whole, chained, and in the log when its
// caller returns.
func TestGroupWindowOneCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	out := &keptOut{}
	w := NewWriter(out, Options{Chain: true, GroupWindow: time.Second})
	const callers, each = 16, 50
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for j := range each {
				if _, err := w.Write(line(i, j)); err != nil {
					t.Error(err)
					return
				}
				if want := fmt.Sprintf(`{"g":%d,"i":%d,"prev":`, i, j); !bytes.Contains(out.bytes(), []byte(want)) {
					t.Errorf("Write returned before its line %s... reached the output", want)
				}
			}
		})
	}
	wg.Wait()
	s := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Lines != callers*each {
		t.Fatalf("got %d lines, want %d", s.Lines, callers*each)
	}
	if perWrite := float64(s.Lines) / float64(s.Writes); perWrite < 2 {
		t.Errorf("%.2f lines per write on one CPU with GroupWindow, want at least 2", perWrite)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != callers*each {
		t.Fatalf("got %d lines in the output, want %d", len(lines), callers*each)
	}
	if i := checkChain(t, lines, [32]byte{}); i >= 0 {
		t.Errorf("chain broken at line %d", i)
	}
}

// keptOut is an output that keeps what is written.
type keptOut struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *keptOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *keptOut) bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}

// BenchmarkWriterChainParallel: concurrent callers writing chained lines
// of a realistic size to a file, as the proxy's requests do; "checkpoints"
// adds a checkpoint log at its defaults (every 10,000 lines or 60 s).
func BenchmarkWriterChainParallel(b *testing.B) {
	for _, ck := range []bool{false, true} {
		name := "plain"
		if ck {
			name = "checkpoints"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			f, err := os.Create(filepath.Join(dir, "audit.log"))
			if err != nil {
				b.Fatal(err)
			}
			o := Options{Chain: true}
			if ck {
				if o.Checkpoints, err = OpenCheckpoints(CheckpointOptions{Path: filepath.Join(dir, "checkpoints.log")}); err != nil {
					b.Fatal(err)
				}
			}
			w := NewWriter(f, o)
			line := []byte(`{"pad":"` + strings.Repeat("v", 690) + `"}` + "\n") // about 700 octets
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.Write(line); err != nil {
						b.Error(err)
						return
					}
				}
			})
			w.Close()
		})
	}
}

// BenchmarkWriterOneCPU: 32 callers on one CPU (GOMAXPROCS 1), as a
// proxy pinned to one CPU serves 32 connections: each does some work
// (about 10 µs), then writes a chained line of an allowed request's size
// to a file. It reports the process's CPU time per line (user and
// system, from getrusage) and the lines per write(2), with and without
// GroupWindow.
func BenchmarkWriterOneCPU(b *testing.B) {
	for _, window := range []time.Duration{0, 100 * time.Microsecond} {
		b.Run(fmt.Sprintf("window=%v", window), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			f, err := os.Create(filepath.Join(b.TempDir(), "audit.log"))
			if err != nil {
				b.Fatal(err)
			}
			w := NewWriter(f, Options{Chain: true, GroupWindow: window})
			line := []byte(`{"pad":"` + strings.Repeat("v", 760) + `"}` + "\n")
			var next atomic.Int64
			var wg sync.WaitGroup
			cpu0 := processCPU()
			b.ResetTimer()
			for range 32 {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						work(10 * time.Microsecond)
						if _, err := w.Write(line); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			cpu := processCPU() - cpu0
			st := w.Stats()
			w.Close()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/line")
			b.ReportMetric(float64(st.Lines)/float64(st.Writes), "lines/write")
		})
	}
}

// work spins for about d.
func work(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// processCPU is the CPU time of this process so far (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
