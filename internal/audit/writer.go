// Package audit writes and checks robotsproxy's audit log: one JSON object
// per line, one line per request.
//
// Writer is the log's only writer. It writes each line whole, repairs a
// file left without its final newline by a crash, batches the lines of
// concurrent requests into one write(2) (group commit: a caller returns
// once its line is written, so nothing acknowledged is lost to a crash),
// and can chain every line to the one before it by SHA-256 (field "prev").
// A write that fails is never acknowledged: its callers get the error, the
// chain does not advance over it, and its octets are taken back from the
// file, so the log never holds a merged or half line.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxPending is Options.MaxPending when it is 0: the octets queued
// for the next write before callers wait (back-pressure).
const DefaultMaxPending = 1 << 20

// DefaultGroupWindow is the server's Options.GroupWindow: lines that
// arrive within 100 µs of the last write share the next one.
const DefaultGroupWindow = 100 * time.Microsecond

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("audit log closed")

// Options configure a Writer.
type Options struct {
	// MaxPending bounds the octets queued for the next write; a caller that
	// would exceed it waits until the writer catches up. Default
	// DefaultMaxPending.
	MaxPending int
	// Chain adds "prev": the hex SHA-256 of the previous line's octets
	// (newline included) to every line, so that deleting, editing or
	// reordering lines breaks the chain where it happened.
	Chain bool
	// Prev is the SHA-256 of the line before the first one written (the
	// last line already in the log, as OpenFile returns it). Zero starts a
	// new chain (prev of the first line is then 64 zeros).
	Prev [sha256.Size]byte
	// OnError is called with the error of each failed write, by the
	// caller that made it, outside the Writer's lock; nil ignores it.
	// Those lines' callers get the error from Write as well.
	OnError func(error)
	// OnWriteError is what the server does with a request whose line was
	// not written ("refuse" or "continue"); it is recorded in the
	// lost-lines marker (see MarkerLostLines).
	OnWriteError string
	// Now is the clock of the lost-lines marker and of checkpoints; nil
	// means time.Now.
	Now func() time.Time
	// Checkpoints, when not nil, receives the chain's head every so many
	// lines or seconds and at Close (see CheckpointOptions); Close closes
	// it.
	Checkpoints *Checkpoints
	// Tap, when not nil, is given every line that reached the output, in
	// the log's order, once the write that held it succeeded: the octets
	// as written, "prev" included and the newline left out, and, when
	// chaining, the line's SHA-256 (newline included: the "prev" of the
	// line after it); zero when not chaining. The lost-lines marker is a
	// line like the others. It is called by the caller that made the
	// write, one call at a time and outside the Writer's lock, before the
	// callers of those lines return: it must not block, and line is valid
	// during the call only. A live view of the log reads it (package
	// live).
	Tap func(line []byte, sum [sha256.Size]byte)
	// GroupWindow, when positive, lets a write carry the lines of
	// requests that are about to end: a caller that would write while
	// lines arrive less than GroupWindow apart (the last write began that
	// recently) first lets the other runnable goroutines run once
	// (runtime.Gosched), and writes the lines they queued meanwhile with
	// its own. Nothing waits on a timer: an idle log writes at once.
	GroupWindow time.Duration
}

// Unwriter is an output that can take back the last n octets written to
// it (a file truncated by n). Writer uses it to remove a partial write; an
// output without it gets a newline instead, so that the cut line stays on
// a line of its own.
type Unwriter interface {
	Unwrite(n int) error
}

// Field names of the lost-lines marker, the line written before the first
// line that reaches the log after failed writes: lost_lines is the number
// of lines not written, lost_since the time of the first failure, and
// on_write_error what the requests of those lines were answered
// ("refuse": 503 audit-unavailable; "continue": as decided).
const (
	MarkerLostLines    = "lost_lines"
	MarkerLostSince    = "lost_since"
	MarkerOnWriteError = "on_write_error"
)

// batch is the set of lines that share one write.
type batch struct {
	written bool // set, under Writer.mu, once the write has returned
	err     error
}

// Writer is a group-commit audit line writer in front of out. It is safe
// for concurrent use. Each Write must be one whole line ending in "\n" (a
// zerolog event is).
//
// There is one write to out at a time, made by one of the callers (the
// leader) rather than by a goroutine of the Writer's own, so that a lone
// line costs no hand-off between goroutines: a caller that finds no write
// in progress writes its line at once (with GroupWindow, once the other
// runnable goroutines have run, when lines arrive that closely). Lines
// whose callers arrive while a write is in progress queue up, and one of
// those callers writes them all together once it returns. Nothing is
// allocated per line, and one small batch record per write.
type Writer struct {
	out  io.Writer
	opts Options

	mu      sync.Mutex
	cond    *sync.Cond // broadcast when a write ends (and pending is taken)
	pending []byte     // whole lines as given, without "prev"
	spare   []byte
	cur     *batch // the batch pending belongs to
	writing bool   // a leader is writing
	closed  bool

	// Owned by the leader (one at a time; handed over under mu).
	prev      [sha256.Size]byte   // the chain's head: the last line in the log
	chained   []byte              // the octets of the write in progress
	sums      [][sha256.Size]byte // the SHA-256 of each line of chained, for Tap
	dirty     int                 // octets of a failed write not yet taken back
	lost      uint64              // lines not written since the last write that was
	lostSince time.Time
	written   uint64    // lines that reached the output
	lastLead  time.Time // when the last write was led (GroupWindow)

	lines, writes, writeErrors, lostLines atomic.Uint64
	failing                               atomic.Bool
}

// NewWriter returns a Writer over out. Close writes what is queued and
// closes out.
func NewWriter(out io.Writer, o Options) *Writer {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &Writer{out: out, opts: o, cur: &batch{}, prev: o.Prev}
	if c := o.Checkpoints; c != nil {
		c.mu.Lock()
		c.report = func(err error) {
			w.writeErrors.Add(1)
			if o.OnError != nil {
				o.OnError(err)
			}
		}
		c.mu.Unlock()
	}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Write queues one line and returns once it is written (with the lines of
// concurrent callers, in one write to the underlying writer). The error is
// that write's: the line is then not in the log (see Writer). A caller whose line would take the queue past MaxPending
// octets waits for the queue to be taken first (back-pressure); no line
// is dropped.
func (w *Writer) Write(line []byte) (int, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return 0, fmt.Errorf("audit: a write must be one whole line ending in a newline (%d octets)", len(line))
	}
	w.mu.Lock()
	for !w.closed && len(w.pending) > 0 && len(w.pending)+len(line) > w.opts.MaxPending {
		w.cond.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	w.pending = append(w.pending, line...)
	w.lines.Add(1)
	b := w.cur
	for !b.written {
		if !w.writing {
			// Batches are written in order, so an unwritten batch with no
			// write in progress is the current one: lead it.
			w.lead(b)
			break
		}
		w.cond.Wait()
	}
	w.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	return len(line), nil
}

// Recover tries to end a failure of the log before a caller acts on it:
// while Failing, it makes the write the next line would make, without a
// line of its own: the lost-lines marker (see MarkerLostLines), after
// taking back what a failed write left. It returns nil when the log is
// not failing, or no longer is (the marker is then in the log, chained,
// and Failing is false); else that write's error, which is neither
// counted in Stats.WriteErrors nor given to Options.OnError (it loses no
// line, and the failure it confirms was reported). A write in progress is
// waited for, and its outcome counts: lines queued meanwhile are written
// with the marker. After Close it returns ErrClosed.
//
// A server that refuses requests while the log is failing calls it
// first, so that the first request after space returns is served, and
// its own line written, rather than refused.
func (w *Writer) Recover() error {
	if !w.failing.Load() {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	b := w.cur
	for !b.written {
		if !w.writing {
			w.lead(b) // pending may be empty: then the marker is written alone
			break
		}
		w.cond.Wait()
	}
	if b.err != nil {
		return b.err
	}
	if w.failing.Load() { // a later write failed meanwhile
		return fmt.Errorf("write audit log: the log is failing again")
	}
	return nil
}

// lead writes b, the batch pending belongs to. Called with w.mu held; it
// unlocks w.mu during the write. When it returns, the callers of lines
// queued meanwhile are woken, and one of them leads the next write.
func (w *Writer) lead(b *batch) {
	w.writing = true
	if d := w.opts.GroupWindow; d > 0 {
		now := time.Now()
		if now.Sub(w.lastLead) < d {
			w.mu.Unlock()
			runtime.Gosched() // lines queued meanwhile join this write
			w.mu.Lock()
		}
		w.lastLead = now
	}
	raw := w.pending
	w.pending, w.spare = w.spare[:0], nil
	w.cur = &batch{}
	w.mu.Unlock()

	err := w.commit(raw)

	w.mu.Lock()
	b.err, b.written = err, true
	if cap(raw) <= 4*w.opts.MaxPending {
		w.spare = raw[:0]
	}
	w.writing = false
	w.cond.Broadcast()
}

// commit writes raw, whole lines, chained onto the log's head. The head
// advances only when every octet reached the output; a failed write is
// taken back and its lines counted as lost. Called by the leader only.
func (w *Writer) commit(raw []byte) error {
	if w.dirty > 0 { // a failed write that could not be taken back yet
		if err := w.unwrite(w.dirty); err != nil {
			return w.fail(raw, 0, err)
		}
		w.dirty = 0
	}
	buf, prev := w.chained[:0], w.prev
	sums, keepSums := w.sums[:0], w.opts.Tap != nil && w.opts.Chain
	lines := 0
	if w.lost > 0 {
		buf, prev = w.appendLine(buf, w.marker(), prev)
		if keepSums {
			sums = append(sums, prev)
		}
		lines++
	}
	for rest := raw; len(rest) > 0; lines++ {
		i := bytes.IndexByte(rest, '\n') + 1
		buf, prev = w.appendLine(buf, rest[:i], prev)
		if keepSums {
			sums = append(sums, prev)
		}
		rest = rest[i:]
	}
	w.sums = sums
	if len(buf) == 0 { // Recover with nothing lost and nothing queued
		w.failing.Store(false)
		return nil
	}
	n, err := w.out.Write(buf)
	w.writes.Add(1)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if cap(buf) <= 4*w.opts.MaxPending {
		w.chained = buf[:0]
	}
	if err != nil {
		return w.fail(raw, n, err)
	}
	w.prev, w.lost = prev, 0
	w.written += uint64(lines)
	if w.opts.Tap != nil {
		w.tap(buf, sums)
	}
	w.failing.Store(false)
	if c := w.opts.Checkpoints; c != nil {
		if now := w.opts.Now(); c.due(w.written, now) {
			w.checkpoint(now)
		}
	}
	return nil
}

// tap gives Options.Tap the lines of buf, a write that succeeded, with
// their SHA-256 from sums (empty when not chaining).
func (w *Writer) tap(buf []byte, sums [][sha256.Size]byte) {
	for i := 0; len(buf) > 0; i++ {
		n := bytes.IndexByte(buf, '\n')
		var sum [sha256.Size]byte
		if i < len(sums) {
			sum = sums[i]
		}
		w.opts.Tap(buf[:n], sum)
		buf = buf[n+1:]
	}
}

// checkpoint queues the chain's head for the checkpoint log, written and
// fsynced off the requests' path; a failure is reported as a write error
// but costs no line.
func (w *Writer) checkpoint(now time.Time) {
	w.opts.Checkpoints.add(w.prev, w.written, now)
}

// fail records a write of raw that failed after n octets reached the
// output, takes those octets back, and returns the error for the lines'
// callers.
func (w *Writer) fail(raw []byte, n int, err error) error {
	err = fmt.Errorf("write audit log: %w", err)
	if n > 0 {
		if uerr := w.unwrite(n); uerr != nil {
			w.dirty = n
			err = errors.Join(err, fmt.Errorf("take back a partial write of %d octets: %w", n, uerr))
		}
	}
	w.failing.Store(true)
	if len(raw) == 0 {
		return err // Recover's write: no line lost, the failure already counted and reported
	}
	lost := uint64(bytes.Count(raw, []byte{'\n'}))
	if w.lost == 0 {
		w.lostSince = w.opts.Now()
	}
	w.lost += lost
	w.lostLines.Add(lost)
	w.writeErrors.Add(1)
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
	return err
}

// unwrite takes back the last n octets written: truncated from a file,
// or ended with a newline on an output that cannot take octets back.
func (w *Writer) unwrite(n int) error {
	if u, ok := w.out.(Unwriter); ok {
		return u.Unwrite(n)
	}
	_, err := w.out.Write([]byte{'\n'})
	return err
}

// marker returns the lost-lines marker line for the lines lost so far.
func (w *Writer) marker() []byte {
	m := []byte(`{"time":"`)
	m = w.opts.Now().UTC().AppendFormat(m, time.RFC3339Nano)
	m = append(m, `","level":"warn","message":"audit lines not written","`+MarkerLostLines+`":`...)
	m = strconv.AppendUint(m, w.lost, 10)
	m = append(m, `,"`+MarkerLostSince+`":"`...)
	m = w.lostSince.UTC().AppendFormat(m, time.RFC3339Nano)
	m = append(m, `","`+MarkerOnWriteError+`":`...)
	m = strconv.AppendQuote(m, w.opts.OnWriteError)
	return append(m, "}\n"...)
}

// appendLine appends line to dst, with "prev" added when chaining, and
// returns the chain's head after it.
func (w *Writer) appendLine(dst, line []byte, prev [sha256.Size]byte) ([]byte, [sha256.Size]byte) {
	if !w.opts.Chain {
		return append(dst, line...), prev
	}
	start := len(dst)
	dst = AppendPrev(dst, line, prev)
	return dst, sha256.Sum256(dst[start:])
}

// AppendPrev appends line (a JSON object and "\n") to dst with
// "prev":"HEX" inserted as its last field, HEX being the hex of prev. A
// line that is not an object ending in "}\n" is appended unchanged.
func AppendPrev(dst, line []byte, prev [sha256.Size]byte) []byte {
	n := len(line)
	if n < 3 || line[n-2] != '}' {
		return append(dst, line...)
	}
	dst = append(dst, line[:n-2]...)
	if line[n-3] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, `"prev":"`...)
	dst = hex.AppendEncode(dst, prev[:])
	return append(dst, "\"}\n"...)
}

// Close waits for the lines queued to be written, then closes out if it
// is an io.Closer. Writes after Close fail with ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.cond.Broadcast()
	for w.writing || len(w.pending) > 0 {
		w.cond.Wait()
	}
	w.mu.Unlock()
	var err error
	if c := w.opts.Checkpoints; c != nil { // no leader now: the state is ours
		if c.lastLines != w.written {
			w.checkpoint(w.opts.Now())
		}
		err = c.Close()
	}
	if c, ok := w.out.(io.Closer); ok {
		err = errors.Join(c.Close(), err)
	}
	return err
}

// Stats are a Writer's counters.
type Stats struct {
	// Lines is the number of lines given to Write; Writes the number of
	// writes to the underlying writer. Lines/Writes is the batching factor.
	Lines, Writes uint64
	// WriteErrors is the number of writes that failed; LostLines the
	// lines those writes held, which are not in the log.
	WriteErrors, LostLines uint64
}

// Stats returns the counters so far.
func (w *Writer) Stats() Stats {
	return Stats{Lines: w.lines.Load(), Writes: w.writes.Load(),
		WriteErrors: w.writeErrors.Load(), LostLines: w.lostLines.Load()}
}

// Failing reports whether the last write failed: lines are not reaching
// the log until a write succeeds again.
func (w *Writer) Failing() bool { return w.failing.Load() }
