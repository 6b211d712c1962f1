package proxy

import (
	"bytes"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
)

// The fields of an audit line that depend only on who is asking and on
// the robots.txt result (the identity, the robots.txt URL and group, the
// result's SHA-256 and fetch time) are the same on every line decided
// for that crawler on that result. They are rendered once, by the same
// calls that render them on a line, and kept as JSON fragments, which a
// line then takes whole (zerolog's RawJSON after the first field's key):
// a line is the same, octet for octet, whether its fragment was rendered
// for it or kept. Fragments are kept in bounded memos, forgotten
// whole when full; one (or its key) longer than fragmentMax is not kept.
const (
	fragmentsMax = 1024
	fragmentMax  = 1 << 10
)

// fragments are a Proxy's kept fragments.
type fragments struct {
	who      *memo.Sync[whoKey, []byte]
	evidence *memo.Sync[evidenceKey, []byte]
}

func newFragments() fragments {
	return fragments{who: memo.NewSync[whoKey, []byte](fragmentsMax),
		evidence: memo.NewSync[evidenceKey, []byte](fragmentsMax)}
}

// whoKey is what the fields from product_token to star_fallback are
// rendered from: candidates is how many candidates there are (0 or 1),
// candidate the one. Identities with more than one candidate are not kept
// (a list is not comparable), nor are pinned users'.
type whoKey struct {
	token, source, candidate, robotsURL, group string
	candidates                                 int
	fallback                                   bool
}

// size is the key's length in octets.
func (k *whoKey) size() int {
	return len(k.token) + len(k.source) + len(k.candidate) + len(k.robotsURL) + len(k.group)
}

// whoFields adds product_token, token_source, candidates, robots_url and,
// when a group applies, group and star_fallback, for decision d: a kept
// fragment, or the fields rendered (and kept) now.
func (p *Proxy) whoFields(f fieldWriter, e *zerolog.Event, d *policy.Decision) *zerolog.Event {
	id := &d.Identity
	if len(id.Candidates) > 1 || id.User != "" {
		return whoFieldsOf(f, e, d)
	}
	k := whoKey{token: id.Token, source: string(id.Source), robotsURL: d.RobotsURL,
		group: d.Verdict.Agent, candidates: len(id.Candidates), fallback: d.Verdict.Fallback}
	if k.candidates == 1 {
		k.candidate = id.Candidates[0]
	}
	if frag, ok := p.frags.who.Get(k); ok {
		return e.RawJSON(auditlog.FieldToken, frag)
	}
	frag := render(auditlog.FieldToken, func(e *zerolog.Event) *zerolog.Event { return whoFieldsOf(f, e, d) })
	if len(frag) <= fragmentMax && k.size() <= fragmentMax {
		// strings.Clone: a kept key holds no request's memory.
		p.frags.who.Put(whoKey{token: strings.Clone(k.token), source: strings.Clone(k.source), candidate: strings.Clone(k.candidate),
			robotsURL: strings.Clone(k.robotsURL), group: strings.Clone(k.group), candidates: k.candidates, fallback: k.fallback}, frag)
	}
	return e.RawJSON(auditlog.FieldToken, frag)
}

// whoFieldsOf renders the fields of whoFields.
func whoFieldsOf(f fieldWriter, e *zerolog.Event, d *policy.Decision) *zerolog.Event {
	e = f.str(e, auditlog.FieldToken, d.Identity.Token)
	e = e.Str(auditlog.FieldTokenSource, string(d.Identity.Source))
	e = f.strs(e, auditlog.FieldCandidates, d.Identity.Candidates)
	e = f.str(e, auditlog.FieldRobotsURL, d.RobotsURL)
	if d.Identity.User != "" {
		e = f.str(e, auditlog.FieldUser, d.Identity.User)
	}
	if d.Verdict.Agent != "" {
		e = f.str(e, auditlog.FieldGroup, d.Verdict.Agent).Bool(auditlog.FieldFallback, d.Verdict.Fallback)
	}
	return e
}

// evidenceKey is a robots.txt result's evidence: its SHA-256 and when it
// was fetched.
type evidenceKey struct {
	sum [32]byte
	at  int64 // Unix nanoseconds
}

// evidenceFields adds robots_sha256 and robots_fetched_at, when the
// decision has both: a kept fragment, or the fields rendered (and kept)
// now.
func (p *Proxy) evidenceFields(e *zerolog.Event, d *policy.Decision) *zerolog.Event {
	if d.RobotsSHA256 == [32]byte{} || d.RobotsFetchedAt.IsZero() {
		return evidenceFieldsOf(e, d.RobotsSHA256, d.RobotsFetchedAt)
	}
	k := evidenceKey{sum: d.RobotsSHA256, at: d.RobotsFetchedAt.UnixNano()}
	if frag, ok := p.frags.evidence.Get(k); ok {
		return e.RawJSON(auditlog.FieldRobotsSHA256, frag)
	}
	frag := render(auditlog.FieldRobotsSHA256, func(e *zerolog.Event) *zerolog.Event {
		return evidenceFieldsOf(e, d.RobotsSHA256, d.RobotsFetchedAt)
	})
	p.frags.evidence.Put(k, frag)
	return e.RawJSON(auditlog.FieldRobotsSHA256, frag)
}

// evidenceFieldsOf renders the fields of evidenceFields.
func evidenceFieldsOf(e *zerolog.Event, sum [32]byte, at time.Time) *zerolog.Event {
	if sum != [32]byte{} {
		e = e.Hex(auditlog.FieldRobotsSHA256, sum[:])
	}
	if !at.IsZero() {
		e = appendTime(e, auditlog.FieldRobotsFetchedAt, at)
	}
	return e
}

// render returns what fields writes on an event of its own, without the
// braces and the first field's key, which must be first: the JSON that
// e.RawJSON(first, fragment) adds as fields would.
func render(first string, fields func(*zerolog.Event) *zerolog.Event) []byte {
	var buf bytes.Buffer
	l := zerolog.New(&buf)
	fields(l.Log()).Send() // {"first":...}\n
	b := bytes.TrimSuffix(buf.Bytes(), []byte("}\n"))
	prefix := len(`{"`) + len(first) + len(`":`)
	return bytes.Clone(b[prefix:])
}
