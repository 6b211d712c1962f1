package audit

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/keyfile"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Defaults of CheckpointOptions: a checkpoint every 10,000 lines or 60
// seconds, whichever comes first (the defaults of
// audit.checkpoint_every_lines and audit.checkpoint_every).
const (
	DefaultCheckpointLines = rules.DefaultCheckpointLines
	DefaultCheckpointEvery = rules.DefaultCheckpointEvery
)

// CheckpointOptions configure a checkpoint log.
type CheckpointOptions struct {
	// Path is the checkpoint log, appended to and fsynced at each
	// checkpoint. Keep it where the audit log's writer cannot rewrite it
	// unnoticed: another disk, a WORM bucket, a second machine.
	Path string
	// EveryLines and Every bound the lines and the time between two
	// checkpoints; 0 means DefaultCheckpointLines / DefaultCheckpointEvery.
	EveryLines int
	Every      time.Duration
	// Key, when not empty, signs each checkpoint with HMAC-SHA256, so that
	// someone who can rewrite both logs but not read the key cannot forge
	// a checkpoint.
	Key []byte
}

// Checkpoint is one line of the checkpoint log: the audit chain's head
// (the SHA-256 of the last line written, which the next line's prev
// names), how many lines the writer had written since it opened, and when.
type Checkpoint struct {
	Time  time.Time `json:"time"`
	Head  string    `json:"head"`
	Lines uint64    `json:"lines"`
	// HMAC is the hex HMAC-SHA256 of the line's other fields as written
	// (see checkpointBody), "" when no key was set.
	HMAC string `json:"hmac,omitempty"`
}

// Checkpoints appends checkpoints of a Writer's chain. The Writer's leader
// decides when one is due and queues it; a goroutine of the Checkpoints
// writes and fsyncs what is queued, so that no request waits for an
// fsync. Close writes what is queued, then stops it.
type Checkpoints struct {
	f    *os.File
	opts CheckpointOptions

	// Owned by the Writer's leader.
	lastLines uint64
	lastTime  time.Time

	mu     sync.Mutex
	queue  []Checkpoint // not yet written, oldest first
	report func(error)  // a failed write; set by NewWriter
	kick   chan struct{}
	done   chan struct{}
}

// OpenCheckpoints opens (creates) the checkpoint log for appending and
// starts its writer; Close stops it.
func OpenCheckpoints(o CheckpointOptions) (*Checkpoints, error) {
	if o.EveryLines <= 0 {
		o.EveryLines = DefaultCheckpointLines
	}
	if o.Every <= 0 {
		o.Every = DefaultCheckpointEvery
	}
	f, err := os.OpenFile(o.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint log: %w", err)
	}
	c := &Checkpoints{f: f, opts: o, report: func(error) {}, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// run writes queued checkpoints until Close closes kick.
func (c *Checkpoints) run() {
	defer close(c.done)
	for range c.kick {
		c.flush()
	}
	c.flush()
}

// flush writes every queued checkpoint in one write and one fsync.
func (c *Checkpoints) flush() {
	c.mu.Lock()
	q := c.queue
	c.queue = nil
	report := c.report
	c.mu.Unlock()
	if len(q) == 0 {
		return
	}
	var buf []byte
	for _, cp := range q {
		buf = c.appendLine(buf, cp)
	}
	if _, err := c.f.Write(buf); err != nil {
		report(fmt.Errorf("checkpoint log: %w", err))
		return
	}
	if err := c.f.Sync(); err != nil {
		report(fmt.Errorf("checkpoint log: %w", err))
	}
}

// due reports whether a checkpoint is owed after lines written in all.
func (c *Checkpoints) due(lines uint64, now time.Time) bool {
	if c.lastTime.IsZero() { // the first lines: the window starts now
		c.lastTime = now
	}
	if lines == c.lastLines {
		return false
	}
	return lines-c.lastLines >= uint64(c.opts.EveryLines) || now.Sub(c.lastTime) >= c.opts.Every
}

// add queues a checkpoint of head after lines written in all, at now.
// Called by the Writer's leader; the write and fsync happen in run.
func (c *Checkpoints) add(head [sha256.Size]byte, lines uint64, now time.Time) {
	c.lastLines, c.lastTime = lines, now
	c.mu.Lock()
	c.queue = append(c.queue, Checkpoint{Time: now, Head: hex.EncodeToString(head[:]), Lines: lines})
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // run is kicked already
	}
}

// appendLine appends cp as a checkpoint line, signed when there is a key.
func (c *Checkpoints) appendLine(dst []byte, cp Checkpoint) []byte {
	head, _ := parseHead(cp.Head)
	body := checkpointBody(cp.Time, head, cp.Lines)
	dst = append(dst, body...)
	if len(c.opts.Key) > 0 {
		dst = append(dst, `,"hmac":"`...)
		dst = hex.AppendEncode(dst, checkpointMAC(c.opts.Key, body))
		dst = append(dst, '"')
	}
	return append(dst, "}\n"...)
}

// Close writes the checkpoints queued, stops the writer and closes the
// checkpoint log. It is called once, by Writer.Close.
func (c *Checkpoints) Close() error {
	close(c.kick)
	<-c.done
	return c.f.Close()
}

// checkpointBody is a checkpoint line up to (without) its hmac and closing
// brace: the octets the HMAC covers.
func checkpointBody(t time.Time, head [sha256.Size]byte, lines uint64) []byte {
	b := []byte(`{"time":"`)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","head":"`...)
	b = hex.AppendEncode(b, head[:])
	b = append(b, `","lines":`...)
	return strconv.AppendUint(b, lines, 10)
}

func checkpointMAC(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)
}

// ReadCheckpoints reads a checkpoint log. With a key, every checkpoint
// must carry a valid HMAC; a line that does not parse or whose HMAC is
// wrong or missing is an error naming its line.
func ReadCheckpoints(path string, key []byte) ([]Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint log: %w", err)
	}
	defer f.Close()
	var out []Checkpoint
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var c Checkpoint
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("checkpoint log %s:%d: %w", path, n, err)
		}
		head, err := parseHead(c.Head)
		if err != nil {
			return nil, fmt.Errorf("checkpoint log %s:%d: %w", path, n, err)
		}
		if len(key) > 0 {
			want := checkpointMAC(key, checkpointBody(c.Time, head, c.Lines))
			got, err := hex.DecodeString(c.HMAC)
			if err != nil || !hmac.Equal(got, want) {
				return nil, fmt.Errorf("checkpoint log %s:%d: %w", path, n, ErrCheckpointMAC)
			}
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("checkpoint log %s: %w", path, err)
	}
	return out, nil
}

// ErrCheckpointMAC: a checkpoint's HMAC is missing or wrong (forged, or
// checked with another key).
var ErrCheckpointMAC = errors.New("HMAC missing or wrong: the checkpoint was not written with this key")

// ReadCheckpointKey reads the checkpoint HMAC key from path (the file of
// audit.checkpoint_hmac_key_file and of audit verify -checkpoint-key):
// its contents without surrounding white space, not empty and at most
// keyfile.MaxBytes octets.
// The key never appears in an error.
func ReadCheckpointKey(path string) ([]byte, error) {
	return keyfile.Read(path, 1)
}

// ParseHead reads a chain head given as 64 hex digits (audit verify -head).
func ParseHead(s string) ([sha256.Size]byte, error) { return parseHead(s) }

func parseHead(s string) (h [sha256.Size]byte, err error) {
	if len(s) != 2*sha256.Size {
		return h, fmt.Errorf("head %q: want 64 hex digits", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("head %q: %w", s, err)
	}
	return h, nil
}
