package verify

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"

	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Kind classifies a Problem.
type Kind string

const (
	// KindChain: the line's prev is not the SHA-256 of the line before it
	// (a line deleted, inserted, edited or moved), or the line has none.
	KindChain Kind = "chain"
	// KindDecision: re-deciding the line (from the archived robots.txt,
	// its path, or the configuration's exempt hosts) gives another
	// decision, reason, group, rule or rule line; or the archive's fetch
	// record contradicts the line; or the line lacks what its reason
	// needs (robots_reason for politeness reasons), names another
	// authority's robots.txt, or allows for a reason that never allows.
	KindDecision Kind = "decision"
	// KindAltered: the archived body the line names does not hash to its
	// name: the archive was changed.
	KindAltered Kind = "altered"
	// KindBadLine: the line is not a JSON object, or was cut (no newline).
	KindBadLine Kind = "bad-line"
	// KindUnverifiable: a decision line that cannot be re-decided: no
	// archive, no archived body or fetch record, a field cut short, or
	// reason override without a configuration (VerifyOptions.ExemptHosts).
	KindUnverifiable Kind = "unverifiable"
	// KindAnchor: the chain does not pass through a checkpoint (lines
	// before it were edited or deleted), passes through checkpoints out
	// of order, ends before the last checkpoint (lines deleted from the
	// end), or does not end at the head given (-head).
	KindAnchor Kind = "anchor"
	// KindSignature: the line's signature_keyid (Web Bot Auth) is not a
	// key the proxy had published (archived in the key directory
	// snapshots, see RecordKeys) at its signature_created, or that key's
	// nbf/exp do not cover signature_created, or the line has one of the
	// two fields without the other.
	KindSignature Kind = "signature"
)

// Problem is one line that does not verify.
type Problem struct {
	File string
	Line int // 1-based
	Kind Kind
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Kind, p.Msg) }

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Archive is the robots.txt archive directory; "" leaves every
	// decision line that robots.txt decided unverifiable (those with
	// reason implicit-robots-txt or override need none).
	Archive string
	// ChainOnly checks the hash chain and the lines' form only: decision
	// lines are not re-decided (counted in ChainOnly), so no archive is
	// needed and none is unverifiable.
	ChainOnly bool
	// Genesis requires the first line's prev to be 64 zeros: the logs
	// given start the chain. Otherwise the first line's prev is accepted
	// whatever it is, and reported as the chain's start (older files may
	// have been removed by rotation).
	Genesis bool
	// ExemptHosts are the exempt_hosts of the proxy's configuration:
	// lines with reason override are checked against them. Nil (no
	// configuration given) leaves those lines unverifiable; an empty,
	// non-nil list exempts no host.
	ExemptHosts []string
	// Report is called with each problem, in log order; nil drops them.
	Report func(Problem)
	// Checkpoints, when not nil, anchor the chain: it must pass through
	// the head of every checkpoint made since its first line, in order,
	// and not end before the last one (see ReadCheckpoints). Checkpoints
	// older than the first line given are not required (rotated away).
	Checkpoints []audit.Checkpoint
	// Head, when not nil, is where the chain must end: the hex-decoded
	// head kept elsewhere.
	Head *[sha256.Size]byte
}

// VerifyResult counts what Verify found.
type VerifyResult struct {
	Files, Lines int
	// Decisions are lines that carry a decision verify re-decides
	// (reasons rule, no-matching-rule, unavailable, unreachable,
	// destination-refused, implicit-robots-txt, override, crawl-delay,
	// backoff, host-concurrency, usage-preference, license,
	// license-required) and lines that allow
	// for any other reason but intercept (a problem each); Verified those
	// re-decided with the same outcome. ChainOnly are the other lines
	// (not-proxied, proxy-auth-*, host-denied, ...), which are only
	// chained.
	Decisions, Verified, ChainOnly int
	// Operational are the proxy's own log messages (JSON lines starting
	// with "level", as serve writes them to stderr) found among the audit
	// lines, where stdout and stderr go to one file: they are not audit
	// lines, are not chained and are not problems.
	Operational int
	// Signed are the lines that carry a signature_keyid (checked against
	// the archived key directory unless ChainOnly), SignedVerified those
	// whose key was in the directory at signature_created.
	Signed, SignedVerified int
	// Problems by kind.
	Differ, Altered, BadLines, Unverifiable, ChainBreaks, Anchors, Signatures int
	// Checkpoints is the number of checkpoints the chain was required to
	// pass through, and passed through in order.
	Checkpoints, CheckpointsPassed int
	// FirstBreak is the first broken link, zero when none.
	FirstBreak Problem
	// StartFile is the file of the chain's first line and StartPrev that
	// line's prev: zeros when the logs start a new chain (genesis).
	StartFile string
	StartPrev [sha256.Size]byte
	// Head is the SHA-256 of the last line: what the next line's prev
	// must be. Record it elsewhere to anchor the chain.
	Head [sha256.Size]byte
	// First is the SHA-256 of the chain's first line (in StartFile), its
	// newline included: what the second line's prev names.
	First [sha256.Size]byte
}

// OK reports whether everything verified: an unbroken chain, no bad line,
// every decision line re-decided the same from an intact archive, every
// signature_keyid a key of the archived directory at its time, and,
// unless allowUnverifiable, no unverifiable decision line.
func (r *VerifyResult) OK(allowUnverifiable bool) bool {
	return r.ChainBreaks == 0 && r.Anchors == 0 && r.Differ == 0 && r.Altered == 0 && r.BadLines == 0 && r.Signatures == 0 &&
		(allowUnverifiable || r.Unverifiable == 0)
}

// maxLine bounds the octets of a line kept for parsing, its newline
// included: auditlog.MaxLineBytes, the one limit of every reader, and the
// newline. A longer line is still hashed whole, and is a bad line.
const maxLine = auditlog.MaxLineBytes + 1

// Verify checks audit logs, given oldest first (rotated files, the current
// file last; plain or gzip, recognised by content): the hash chain through
// every line of every file (see audit.Options.Chain), and every decision line
// re-decided from the archived robots.txt (see VerifyOptions.Archive).
// Problems go to o.Report. The error is an I/O error: a log or the
// archive could not be read.
func Verify(logs []string, o VerifyOptions) (*VerifyResult, error) {
	v := newVerifier(o)
	for _, name := range logs {
		if err := v.file(name); err != nil {
			return &v.res, err
		}
	}
	v.anchors()
	return &v.res, nil
}

// verifier is the state of one Verify run.
type verifier struct {
	opts    VerifyOptions
	res     VerifyResult
	h       hash.Hash
	started bool
	prev    [sha256.Size]byte // hash of the last line read
	prevF   string            // file of the last line read
	prevN   int               // its line number
	dec     *decider
	keys    keyring   // the archived key directory, for signature_keyid
	l       auditLine // the line being checked, reused
	in      interner
	first   time.Time                 // the first line's time, for checkpoints
	passed  map[[sha256.Size]byte]int // checkpoint heads -> 1-based line ordinal where passed
}

func newVerifier(o VerifyOptions) *verifier {
	if o.Report == nil {
		o.Report = func(Problem) {}
	}
	dec := newDecider(o.Archive, defaultBounds())
	if o.ExemptHosts != nil {
		dec.exempt = policy.Exemptions(o.ExemptHosts)
	}
	v := &verifier{opts: o, h: sha256.New(), dec: dec, in: newInterner(), keys: keyring{dir: o.Archive}}
	if len(o.Checkpoints) > 0 {
		v.passed = make(map[[sha256.Size]byte]int, len(o.Checkpoints))
		for _, c := range o.Checkpoints {
			if h, err := audit.ParseHead(c.Head); err == nil {
				v.passed[h] = 0
			}
		}
	}
	return v
}

// file verifies the lines of one log.
func (v *verifier) file(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r = zr
	}
	v.res.Files++
	lr := bufio.NewReaderSize(r, 256<<10)
	var buf []byte
	for n := 1; ; n++ {
		line, long, err := v.readLine(lr, buf[:0])
		buf = line
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if lerr := v.line(name, n, line, long, err == io.EOF); lerr != nil {
			return fmt.Errorf("%s:%d: %w", name, n, lerr)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line into buf (without its newline, at most maxLine
// octets kept) and hashes it whole, newline included, into v.h. long is
// true when octets were left out. At the end of the input err is io.EOF;
// a last line without a newline is hashed as if it had one (as OpenFile
// repairs it).
func (v *verifier) readLine(lr *bufio.Reader, buf []byte) (line []byte, long bool, err error) {
	v.h.Reset()
	for {
		chunk, err := lr.ReadSlice('\n')
		v.h.Write(chunk)
		if len(buf)+len(chunk) <= maxLine {
			buf = append(buf, chunk...)
		} else {
			long = true
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) > 0:
			v.h.Write([]byte{'\n'})
			return buf, long, io.EOF
		case err != nil:
			return buf, long, err
		}
		return buf[:len(buf)-1], long, nil
	}
}

// line checks one line: its link, then its decision. The error is an
// I/O error reading the archive.
func (v *verifier) line(file string, n int, line []byte, long, cut bool) error {
	v.res.Lines++
	if !cut && !long && isOperational(line) {
		v.res.Operational++ // outside the chain: the prev of the next line skips it
		return nil
	}
	if !cut { // a cut line lost its prev, but the next line links to it
		v.link(file, n, line)
	}
	var sum [sha256.Size]byte
	v.h.Sum(sum[:0])
	v.prev, v.prevF, v.prevN, v.res.Head = sum, file, n, sum
	if v.res.Lines-v.res.Operational == 1 {
		v.res.First = sum
	}
	if at, ok := v.passed[sum]; ok && at == 0 {
		v.passed[sum] = v.res.Lines
	}
	if v.res.Lines == 1 && v.passed != nil {
		v.first = firstTime(line)
	}
	switch {
	case cut:
		v.problem(file, n, KindBadLine, "the line is cut: no newline at the end (a crash while it was written)")
		return nil
	case long:
		v.problem(file, n, KindBadLine, fmt.Sprintf("longer than %d octets", auditlog.MaxLineBytes))
		return nil
	}
	l := &v.l
	if err := parseLine(line, l, v.in); err != nil {
		v.problem(file, n, KindBadLine, err.Error())
		return nil
	}
	if err := v.signature(file, n, l); err != nil {
		return err
	}
	if !l.isDecision() || v.opts.ChainOnly {
		v.res.ChainOnly++
		return nil
	}
	v.res.Decisions++
	kind, msg, err := v.dec.check(l)
	switch {
	case err != nil:
		return err
	case kind == "":
		v.res.Verified++
	default:
		v.problem(file, n, kind, msg)
	}
	return nil
}

// link checks that the line's prev is the hash of the line before it.
func (v *verifier) link(file string, n int, line []byte) {
	prev, ok := prevOf(line)
	if !v.started {
		v.started = true
		v.res.StartFile = file
		switch {
		case !ok && !json.Valid(line): // cut by a crash: a bad line
		case !ok:
			v.problem(file, n, KindChain, `no "prev" as the last field: the chain (audit.chain) was off`)
		case v.opts.Genesis && prev != [sha256.Size]byte{}:
			v.problem(file, n, KindChain, fmt.Sprintf("prev is %x, not 64 zeros: the logs do not start the chain (-genesis)", prev))
		}
		v.res.StartPrev = prev
		return
	}
	switch {
	case !ok && !json.Valid(line):
		// A line cut by a crash (see OpenFile) lost its prev; it is a bad
		// line, and the next line's prev shows whether it was moved.
	case !ok:
		v.problem(file, n, KindChain, `no "prev" as the last field: the chain (audit.chain) was off, or the line was edited`)
	case prev == v.prev:
	case prev == [sha256.Size]byte{}:
		v.problem(file, n, KindChain, fmt.Sprintf("prev is 64 zeros: a new chain starts here although %s:%d comes before it (lines or files before this one were removed, or the log was restarted without them)", v.prevF, v.prevN))
	default:
		v.problem(file, n, KindChain, fmt.Sprintf("prev %x is not the SHA-256 of the line before it (%s:%d, %x): a line was deleted, inserted, edited or moved here", prev[:8], v.prevF, v.prevN, v.prev[:8]))
	}
}

// problem counts and reports one problem.
func (v *verifier) problem(file string, n int, k Kind, msg string) {
	p := Problem{File: file, Line: n, Kind: k, Msg: msg}
	switch k {
	case KindChain:
		if v.res.ChainBreaks == 0 {
			v.res.FirstBreak = p
		}
		v.res.ChainBreaks++
	case KindDecision:
		v.res.Differ++
	case KindAltered:
		v.res.Altered++
	case KindBadLine:
		v.res.BadLines++
	case KindUnverifiable:
		v.res.Unverifiable++
	case KindAnchor:
		v.res.Anchors++
	case KindSignature:
		v.res.Signatures++
	}
	v.opts.Report(p)
}

// operationalPrefix starts every operational log line (zerolog writes
// the level first) and no audit line (they have no level).
var operationalPrefix = []byte(`{"level":"`)

// isOperational reports whether line is one of the proxy's operational
// log messages rather than an audit line.
func isOperational(line []byte) bool {
	return bytes.HasPrefix(line, operationalPrefix)
}

var prevField = []byte(`"prev":"`)

// prevOf returns the prev the line ends with: `"prev":"HEX"}` as its last
// field, the way AppendPrev writes it.
func prevOf(line []byte) (prev [sha256.Size]byte, ok bool) {
	const n = 2*sha256.Size + 2 // HEX"}
	if len(line) < len(prevField)+n+1 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return prev, false
	}
	tail := line[len(line)-n-len(prevField):]
	if !bytes.HasPrefix(tail, prevField) {
		return prev, false
	}
	c := line[len(line)-n-len(prevField)-1]
	if c != ',' && c != '{' {
		return prev, false
	}
	if _, err := hex.Decode(prev[:], tail[len(prevField):len(prevField)+2*sha256.Size]); err != nil {
		return prev, false
	}
	return prev, true
}

// firstTime returns a line's "time", zero when it has none.
func firstTime(line []byte) time.Time {
	var l struct {
		Time time.Time `json:"time"`
	}
	_ = json.Unmarshal(line, &l)
	return l.Time
}

// anchors checks the chain against the checkpoints and the head given.
func (v *verifier) anchors() {
	last := 0 // line ordinal of the last checkpoint passed
	for i, c := range v.opts.Checkpoints {
		h, _ := audit.ParseHead(c.Head)
		at := v.passed[h]
		if at == 0 && (v.first.IsZero() || c.Time.Before(v.first)) && v.res.CheckpointsPassed == 0 {
			continue // made before the first line given: rotated away
		}
		v.res.Checkpoints++
		switch {
		case at == 0 && i == len(v.opts.Checkpoints)-1:
			v.problem(v.prevF, v.prevN, KindAnchor, fmt.Sprintf("the log ends before the last checkpoint (%s, head %s…, %d lines): lines were deleted from its end", c.Time.Format(time.RFC3339), c.Head[:16], c.Lines))
		case at == 0:
			v.problem(v.prevF, v.prevN, KindAnchor, fmt.Sprintf("the chain does not pass through checkpoint %d (%s, head %s…): lines before it were edited, inserted or deleted", i+1, c.Time.Format(time.RFC3339), c.Head[:16]))
		case at < last:
			v.problem(v.prevF, v.prevN, KindAnchor, fmt.Sprintf("checkpoint %d (%s) is passed at line %d, before an earlier checkpoint: lines were moved", i+1, c.Time.Format(time.RFC3339), at))
		default:
			v.res.CheckpointsPassed++
			last = at
		}
	}
	if v.opts.Head != nil && v.res.Head != *v.opts.Head {
		v.problem(v.prevF, v.prevN, KindAnchor, fmt.Sprintf("the chain ends at %x, not at the head given (%x): lines were deleted from its end or appended", v.res.Head, *v.opts.Head))
	}
}
