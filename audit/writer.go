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
	"runtime"
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
	// last line already in the log; see Tail). Zero starts a new chain
	// (prev of the first line is then 64 zeros).
	Prev [sha256.Size]byte
}

// batch is the set of lines that share one write.
type batch struct {
	done chan struct{}
	err  error
}

// Writer is a group-commit audit line writer in front of out. It is safe
// for concurrent use. Each Write must be one whole line ending in "\n" (a
// zerolog event is).
type Writer struct {
	out  io.Writer
	opts Options

	mu      sync.Mutex
	space   *sync.Cond // signalled when pending is taken
	pending []byte
	spare   []byte
	cur     *batch
	prev    [sha256.Size]byte
	closed  bool

	wake    chan struct{}
	stopped chan struct{}

	lines, writes atomic.Uint64
}

// NewWriter starts a Writer over out. Close stops it.
func NewWriter(out io.Writer, o Options) *Writer {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	w := &Writer{out: out, opts: o, cur: &batch{done: make(chan struct{})}, prev: o.Prev,
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	w.space = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// Write queues one line and returns once it is written (with the lines of
// concurrent callers, in one write to the underlying writer). The error is
// that write's.
func (w *Writer) Write(line []byte) (int, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return 0, fmt.Errorf("audit: a write must be one whole line ending in a newline (%d octets)", len(line))
	}
	w.mu.Lock()
	for !w.closed && len(w.pending) > 0 && len(w.pending)+len(line) > w.opts.MaxPending {
		w.space.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	w.pending = w.appendLine(w.pending, line)
	b := w.cur
	w.lines.Add(1)
	select { // under mu: Close closes wake under mu too
	case w.wake <- struct{}{}:
	default:
	}
	w.mu.Unlock()
	<-b.done
	if b.err != nil {
		return 0, b.err
	}
	return len(line), nil
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

// loop is the single writer: it takes whatever has queued and writes it in
// one call. Before taking a batch it yields once: goroutines that are
// runnable (handlers about to log, under load) add their lines to it first,
// where the scheduler would otherwise run the writer at once, for one line
// per write. An idle process has nothing else to run, so a lone line is
// written at once.
func (w *Writer) loop() {
	defer close(w.stopped)
	for range w.wake {
		for {
			runtime.Gosched()
			w.mu.Lock()
			buf, b := w.pending, w.cur
			if len(buf) == 0 {
				closed := w.closed
				w.mu.Unlock()
				if closed {
					return
				}
				break
			}
			w.pending, w.spare = w.spare[:0], nil
			w.cur = &batch{done: make(chan struct{})}
			w.space.Broadcast()
			w.mu.Unlock()

			_, b.err = w.out.Write(buf)
			w.writes.Add(1)
			close(b.done)

			w.mu.Lock()
			if cap(buf) <= 4*w.opts.MaxPending {
				w.spare = buf[:0]
			}
			w.mu.Unlock()
		}
	}
}

// Close writes what is queued, stops the writer and closes out if it is an
// io.Closer. Writes after Close fail with ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.space.Broadcast()
	close(w.wake)
	w.mu.Unlock()
	<-w.stopped
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
