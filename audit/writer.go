// Package audit writes and checks robotsproxy's audit log: one JSON object
// per line, one line per request.
//
// Writer is the log's only writer. It writes each line whole, repairs a
// file left without its final newline by a crash, batches the lines of
// concurrent requests into one write(2) (group commit: a caller returns
// once its line is written, so nothing acknowledged is lost to a crash),
// and can chain every line to the one before it by SHA-256 (field "prev").
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// DefaultMaxPending is Options.MaxPending when it is 0: the octets queued
// for the next write before callers wait (back-pressure).
const DefaultMaxPending = 1 << 20

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
}

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
// in progress writes its line at once. Lines whose callers arrive while a
// write is in progress queue up, and one of those callers writes them all
// together once it returns. Nothing is allocated per line, and one small
// batch record per write.
type Writer struct {
	out  io.Writer
	opts Options

	mu      sync.Mutex
	cond    *sync.Cond // broadcast when a write ends (and pending is taken)
	pending []byte
	spare   []byte
	cur     *batch // the batch pending belongs to
	prev    [sha256.Size]byte
	writing bool // a leader is writing
	closed  bool

	lines, writes atomic.Uint64
}

// NewWriter returns a Writer over out. Close writes what is queued and
// closes out.
func NewWriter(out io.Writer, o Options) *Writer {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	w := &Writer{out: out, opts: o, cur: &batch{}, prev: o.Prev}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Write queues one line and returns once it is written (with the lines of
// concurrent callers, in one write to the underlying writer). The error is
// that write's. A caller whose line would take the queue past MaxPending
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
	w.pending = w.appendLine(w.pending, line)
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

// lead writes b, the batch pending belongs to. Called with w.mu held; it
// unlocks w.mu during the write. When it returns, the callers of lines
// queued meanwhile are woken, and one of them leads the next write.
func (w *Writer) lead(b *batch) {
	w.writing = true
	buf := w.pending
	w.pending, w.spare = w.spare[:0], nil
	w.cur = &batch{}
	w.mu.Unlock()

	_, err := w.out.Write(buf)
	w.writes.Add(1)

	w.mu.Lock()
	b.err, b.written = err, true
	if cap(buf) <= 4*w.opts.MaxPending {
		w.spare = buf[:0]
	}
	w.writing = false
	w.cond.Broadcast()
}

// appendLine appends line to dst, with "prev" added when chaining, and
// advances the chain. Called with w.mu held.
func (w *Writer) appendLine(dst, line []byte) []byte {
	if !w.opts.Chain {
		return append(dst, line...)
	}
	start := len(dst)
	dst = AppendPrev(dst, line, w.prev)
	w.prev = sha256.Sum256(dst[start:])
	return dst
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
	if c, ok := w.out.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stats are a Writer's counters.
type Stats struct {
	// Lines is the number of lines written; Writes the number of writes
	// to the underlying writer. Lines/Writes is the batching factor.
	Lines, Writes uint64
}

// Stats returns the counters so far.
func (w *Writer) Stats() Stats {
	return Stats{Lines: w.lines.Load(), Writes: w.writes.Load()}
}
