package policy

import (
	"bytes"
	"strings"

	"github.com/robotsproxy/robotsproxy/robots"
)

// This file matches a request path under every reading an origin may take
// of it. The proxy forwards the request target as sent, and the
// origin, not the proxy, decides which resource it names: one that resolves
// "/public/../private" serves /private. A path is therefore matched as sent
// (RFC 9309 2.2.2) and as each kind of origin resolves it, and it is
// denied when any reading is disallowed.

// reading is one way an origin may resolve a path: a set of the spellings
// it takes for "/" and "." and what it does with empty segments and
// ";parameters". Every reading removes dot segments (RFC 3986 5.2.4).
type reading uint8

const (
	// readDotEscape: "%2e" and "%2E" are "." (RFC 3986 6.2.2.2).
	readDotEscape reading = 1 << iota
	// readSlashEscape: "%2f" and "%2F" separate segments.
	readSlashEscape
	// readBackslash: "\" separates segments (WHATWG URL, IIS).
	readBackslash
	// readBackslashEscape: "%5c" and "%5C" separate segments (IIS and
	// nginx on Windows decode them to "\", then split).
	readBackslashEscape
	// readMerge: empty segments are dropped, so "//" is "/" (nginx
	// merge_slashes, Apache MergeSlashes, Go's path.Clean, Tomcat).
	readMerge
	// readParams: ";parameters" are cut from each segment, so "..;x" is
	// ".." (Tomcat, Jetty).
	readParams
	// readDots is not a reading but a feature: the path has a literal "."
	// or ".." segment (or may have one).
	readDots

	// readAll is every reading flag.
	readAll = readDotEscape | readSlashEscape | readBackslash | readBackslashEscape | readMerge | readParams
	// readResolved is the resolved reading: every escape and
	// backslash is a separator or a dot, empty segments are merged, then
	// dot segments are removed.
	readResolved = readAll &^ readParams
)

// features returns the reading flags whose spellings occur in the path part
// of p (before any "?"), and readDots when p may hold a literal dot segment.
// readMerge is set when two separators of any spelling meet, or a ";"
// follows one: only then can merging change a path. Only the readings of these flags can differ from p
// as sent. features scans p once and does not allocate.
func features(p string) reading {
	var f reading
	prevSep := false // p[i-1] (or the escape before it) may separate segments
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '\\' && (c >= 64 || featureBytes>>c&1 == 0) {
			prevSep = false // the common case: a letter, digit, "-", ...
			continue
		}
		sep := false
		switch c {
		case '?':
			return f
		case '/':
			sep = true
		case '\\':
			f, sep = f|readBackslash, true
		case ';':
			f |= readParams
			if prevSep {
				f |= readMerge // the segment is empty once ";..." is cut
			}
		case '.':
			// A dot segment starts after a separator, escaped or not.
			if i == 0 || p[i-1] == '/' || p[i-1] == '\\' || i >= 3 && p[i-3] == '%' {
				f |= readDots
			}
		case '%':
			if i+2 < len(p) {
				e := escapeFeature(p[i+1], p[i+2])
				f, sep = f|e, e&(readSlashEscape|readBackslashEscape) != 0
				if sep {
					i += 2
				}
			}
		}
		if sep && prevSep {
			f |= readMerge
		}
		prevSep = sep
	}
	return f
}

// featureBytes has bit c set for each octet c below 64 that features looks
// at; "\" (92) is checked apart.
const featureBytes uint64 = 1<<'%' | 1<<'.' | 1<<'/' | 1<<';' | 1<<'?'

// escapeFeature returns the reading flag of the escape "%" hi lo, or 0.
func escapeFeature(hi, lo byte) reading {
	switch {
	case hi == '2' && lo|0x20 == 'e':
		return readDotEscape
	case hi == '2' && lo|0x20 == 'f':
		return readSlashEscape
	case hi == '5' && lo|0x20 == 'c':
		return readBackslashEscape
	}
	return 0
}

// sepLen returns the length of the segment separator at p[i] under reading
// m: 1 for "/" (or "\"), 3 for an escaped one, 0 when p[i] is not one.
func sepLen(p string, i int, m reading) int {
	switch p[i] {
	case '/':
		return 1
	case '\\':
		if m&readBackslash != 0 {
			return 1
		}
	case '%':
		if i+2 < len(p) {
			if f := escapeFeature(p[i+1], p[i+2]); f&(readSlashEscape|readBackslashEscape)&m != 0 {
				return 3
			}
		}
	}
	return 0
}

// dotSegment returns 1 for a "." segment, 2 for "..", and 0 otherwise,
// where under readDotEscape "%2e" and "%2E" spell ".".
func dotSegment(seg string, m reading) int {
	if len(seg) == 0 || len(seg) > len("%2e%2e") || seg[0] != '.' && seg[0] != '%' {
		return 0
	}
	n := 0
	for i := 0; i < len(seg); n++ {
		switch {
		case n == 2:
			return 0
		case seg[i] == '.':
			i++
		case m&readDotEscape != 0 && i+2 < len(seg) && seg[i] == '%' && escapeFeature(seg[i+1], seg[i+2]) == readDotEscape:
			i += 3
		default:
			return 0
		}
	}
	return n
}

// resolve returns path p as an origin reading it under m resolves it:
// the path part (before any "?") is split into segments at the separators
// of m; under readParams each segment is cut at its first ";"; under
// readMerge empty segments other than the last are dropped; then dot
// segments are removed as RFC 3986 5.2.4 does, a ".." above the root
// being dropped. The segments are joined with "/" and the query is appended
// unchanged. The result starts with "/"; it is not percent-normalised (see
// robots.NormalizePath). It allocates.
func resolve(p string, m reading) string {
	path, query := p, ""
	if i := strings.IndexByte(p, '?'); i >= 0 {
		path, query = p[:i], p[i:]
	}
	out := make([]byte, 0, len(p)+1)
	i := 0
	if len(path) > 0 {
		i = sepLen(path, 0, m)
	}
	for {
		j := i
		for j < len(path) {
			if c := path[j]; c != '/' && c != '\\' && c != '%' || sepLen(path, j, m) == 0 {
				j++
				continue
			}
			break
		}
		seg, last := path[i:j], j == len(path)
		if m&readParams != 0 {
			if k := strings.IndexByte(seg, ';'); k >= 0 {
				seg = seg[:k]
			}
		}
		switch dotSegment(seg, m) {
		case 2:
			out = out[:max(0, bytes.LastIndexByte(out, '/'))]
			fallthrough
		case 1:
			if last {
				out = append(out, '/')
			}
		default:
			if seg != "" || last || m&readMerge == 0 {
				out = append(out, '/')
				out = append(out, seg...)
			}
		}
		if last {
			break
		}
		i = j + sepLen(path, j, m)
	}
	return string(out) + query
}

// ResolvePath returns the request path p (path and query, as sent) as an
// origin that normalises aggressively reads it: "%2e" and "%2E" are ".";
// "%2f", "%2F", "%5c", "%5C" and "\" are "/"; empty segments are merged
// ("//" is "/"); then dot segments are removed (RFC 3986 5.2.4; a ".."
// above the root is dropped). The query is kept unchanged. For example
// "/public/..%2Fprivate/x?a=/../b" gives "/private/x?a=/../b". The result
// is not percent-normalised (see robots.NormalizePath). It is one of the
// readings MatchPath matches.
func ResolvePath(p string) string {
	return resolve(p, readResolved)
}

// readings are the normalised spellings (robots.NormalizePath) of one
// request path that rules are matched against.
type readings struct {
	// raw is the path as sent (RFC 9309 2.2.2).
	raw string
	// resolved is ResolvePath's reading, "" when it equals raw.
	resolved string
	// others are the other readings an origin may take, each different
	// from raw, resolved and one another; nil for an ordinary path.
	others []string
}

// readPath returns the readings of request path p ("" means "/"). For a
// path without dot segments, escaped dots or separators, backslashes,
// empty segments or ";" it returns only the raw reading, without
// allocating.
func readPath(p string) readings {
	rs := readings{raw: robots.NormalizePath(p)}
	f := features(p)
	if f == 0 {
		return rs
	}
	rs.resolved = rs.add(resolve(p, f&readResolved))
	present := f & readAll
	for m := present; ; m = (m - 1) & present {
		if m != present&readResolved && possible(m, present) && (m != 0 || f&readDots != 0) {
			if s := rs.add(resolve(p, m)); s != "" {
				rs.others = append(rs.others, s)
			}
		}
		if m == 0 {
			break
		}
	}
	return rs
}

// possible reports whether some origin reads a path whose features are
// present under m, a subset of present. Origins that decode an escaped
// separator decode every escape first: "%5C" is a separator only where "\"
// and "%2F" are, and "%2F" only where "%2e" is ".". A flag whose feature is
// absent changes nothing, so it can be taken as set when needed. Merging
// and ";parameters" go with any reading.
func possible(m, present reading) bool {
	has := func(flag reading) bool { return m&flag != 0 || present&flag == 0 }
	switch {
	case m&readBackslashEscape != 0:
		return has(readBackslash) && has(readSlashEscape) && has(readDotEscape)
	case m&readSlashEscape != 0:
		return has(readDotEscape)
	}
	return true
}

// add normalises a resolved path and returns it, or "" when it is a reading
// rs already has.
func (rs *readings) add(p string) string {
	n := robots.NormalizePath(p)
	if n == rs.raw || n == rs.resolved || contains(rs.others, n) {
		return ""
	}
	return n
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// robotsTxt reports whether every reading names /robots.txt, the URI RFC
// 9309 2.2.2 implicitly allows: "/robots.txt/../private" is not it.
func (rs *readings) robotsTxt() bool {
	if !robots.IsRobotsTxt(rs.raw) || rs.resolved != "" && !robots.IsRobotsTxt(rs.resolved) {
		return false
	}
	for _, p := range rs.others {
		if !robots.IsRobotsTxt(p) {
			return false
		}
	}
	return true
}

// match decides the readings: the raw reading's verdict, unless it allows
// and another reading is disallowed; then the first such reading (resolved
// first) decides. It returns the verdict and the reading to record as the
// resolved path: the deciding one when it is not raw, else rs.resolved.
func (rs *readings) match(r *robots.Robots, tokens []string) (robots.Verdict, string) {
	v := r.TestNormalized(rs.raw, tokens...)
	if !v.Allowed {
		return v, rs.resolved
	}
	if rs.resolved != "" {
		if w := r.TestNormalized(rs.resolved, tokens...); !w.Allowed {
			return w, rs.resolved
		}
	}
	for _, p := range rs.others {
		if w := r.TestNormalized(p, tokens...); !w.Allowed {
			return w, p
		}
	}
	return v, rs.resolved
}

// MatchPath decides a request path (path and query as sent, "" meaning
// "/") for the product tokens under every reading an origin may take of it,
// and denies when any reading is disallowed. The readings are the path as
// sent (RFC 9309 2.2.2) and the path resolved (see ResolvePath) with each
// combination of: "%2e" as "." or not; "%2F", "\" and "%5C" (with "\") as
// "/" or not; empty segments merged or kept; ";parameters" cut or kept.
// Each is normalised with robots.NormalizePath.
//
// The verdict is the raw reading's when every reading allows or the raw
// one denies; otherwise it is the first disallowed reading's. resolved is
// that reading when it decided, else the ResolvePath reading; "" when it
// equals the raw one. For an ordinary path (no dot segment, escaped dot or
// separator, "\", "//" or ";") only the raw reading exists, and MatchPath
// allocates no more than robots.Robots.Test.
func MatchPath(r *robots.Robots, path string, tokens ...string) (v robots.Verdict, resolved string) {
	rs := readPath(path)
	return rs.match(r, tokens)
}
