package live

import (
	"crypto/sha256"
	"sync"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// MinRingBytes is the smallest ring: sixteen of the longest audit lines
// (auditlog.MaxWrittenLineBytes), so that every line fits.
const MinRingBytes = rules.MinLiveRingBytes

// Ring keeps the most recent audit lines, the octets the audit writer
// wrote ("prev" included, newline left out), each with its sequence
// number (1 for the first line put) and its SHA-256. It is bounded twice:
// the lines' octets share one arena of a fixed size, and the lines are
// at most one per 256 octets of it; the oldest lines give way. Put never
// allocates and never waits for a reader: readers copy lines out under
// the same short lock, a line at a time.
type Ring struct {
	mu     sync.Mutex
	arena  []byte
	spans  []span // spans[seq&mask] is line seq, for seq in [oldest, next)
	mask   uint64
	next   uint64 // the seq of the next line put
	oldest uint64 // the oldest seq kept; oldest == next when none is
	pos    uint64 // the octets ever put (padding included): where the next line starts
}

// span is where a line lies in the arena.
type span struct {
	pos uint64 // its first octet, counted as Ring.pos counts
	n   int    // its length, or notKept
	sum [sha256.Size]byte
}

// NewRing returns a ring of size octets (at least MinRingBytes).
func NewRing(size int) *Ring {
	size = max(size, MinRingBytes)
	lines := 1
	for lines < size/256 {
		lines <<= 1
	}
	return &Ring{arena: make([]byte, size), spans: make([]span, lines), mask: uint64(lines - 1), next: 1, oldest: 1}
}

// Put keeps line (copied) and its SHA-256 sum as the newest line, and
// returns its sequence number. A line longer than a quarter of the arena
// is not kept (no audit line is that long: MinRingBytes is 16 of the
// longest): readers count it as skipped.
func (r *Ring) Put(line []byte, sum [sha256.Size]byte) uint64 {
	size := uint64(len(r.arena))
	n := uint64(len(line))
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.next
	r.next++
	if n > size/4 {
		n = 0
	}
	if off := r.pos % size; off+n > size {
		r.pos += size - off // a line never wraps: start it at the arena's start
	}
	start, end := r.pos, r.pos+n
	for r.oldest < seq && (r.seq(r.oldest).pos+size < end || seq-r.oldest >= uint64(len(r.spans))) {
		r.oldest++ // overwritten, or its span is needed
	}
	copy(r.arena[start%size:start%size+n], line)
	sp := span{pos: start, n: int(n), sum: sum}
	if n == 0 && len(line) > 0 {
		sp.n = notKept
	}
	*r.seq(seq) = sp
	r.pos = end
	return seq
}

// notKept is the length of a line too long to keep.
const notKept = -1

func (r *Ring) seq(s uint64) *span { return &r.spans[s&r.mask] }

// Bounds returns the oldest sequence number kept and the next one to be
// put: the ring holds [oldest, next).
func (r *Ring) Bounds() (oldest, next uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oldest, r.next
}

// Entry is a line read from the ring.
type Entry struct {
	Seq  uint64
	Sum  [sha256.Size]byte
	Line []byte // the audit line as written, without its newline
}

// Reader reads a Ring in order from a sequence number on, into buffers
// of its own that it reuses. It is not safe for concurrent use.
type Reader struct {
	ring *Ring
	next uint64
	buf  []byte
	ents []Entry
}

// readBytes is the most octets one Read copies (at least one line).
const readBytes = 64 << 10

// NewReader returns a reader of r that reads from sequence number from
// on (Bounds gives the oldest and the next).
func (r *Ring) NewReader(from uint64) *Reader {
	return &Reader{ring: r, next: from, buf: make([]byte, 0, readBytes)}
}

// Next is the sequence number the reader reads next.
func (rd *Reader) Next() uint64 { return rd.next }

// Read copies the lines from the reader's position on, at most readBytes
// octets of them (and at least one line when there is one), and returns
// them, valid until the next Read, and how many lines were skipped
// because the ring no longer held them: the reader fell behind by more
// than the ring keeps. It returns no entries when the reader has read
// every line put.
func (rd *Reader) Read() (ents []Entry, skipped uint64) {
	r := rd.ring
	buf, ents := rd.buf[:0], rd.ents[:0]
	r.mu.Lock()
	if rd.next < r.oldest {
		skipped, rd.next = r.oldest-rd.next, r.oldest
	}
	if rd.next > r.next { // a position from another ring (a restart): from now on
		rd.next = r.next
	}
	size := uint64(len(r.arena))
	for ; rd.next < r.next; rd.next++ {
		s := r.seq(rd.next)
		if s.n == notKept {
			skipped++
			continue
		}
		if len(ents) > 0 && len(buf)+s.n > readBytes {
			break
		}
		off := s.pos % size
		start := len(buf)
		buf = append(buf, r.arena[off:off+uint64(s.n)]...)
		ents = append(ents, Entry{Seq: rd.next, Sum: s.sum, Line: buf[start:len(buf):len(buf)]})
	}
	r.mu.Unlock()
	rd.buf, rd.ents = buf, ents
	return ents, skipped
}

// Find returns a copy of the line kept whose SHA-256 is sum (lines have
// one when the audit log is chained).
func (r *Ring) Find(sum [sha256.Size]byte) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	size := uint64(len(r.arena))
	for seq := r.next; seq > r.oldest; {
		seq--
		if s := r.seq(seq); s.sum == sum && s.n != notKept {
			off := s.pos % size
			return append([]byte(nil), r.arena[off:off+uint64(s.n)]...), true
		}
	}
	return nil, false
}
