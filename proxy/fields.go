package proxy

import (
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// fieldWriter adds bounded string fields to an audit event.
type fieldWriter struct {
	max int // encoded octets per field
}

// str adds key: val, cut to w.max octets of encoded JSON. A cut value is
// marked with KEY_truncated: true and KEY_length: the original length in
// octets.
func (w fieldWriter) str(e *zerolog.Event, key, val string) *zerolog.Event {
	cut, ok := cutEncoded(val, w.max)
	if ok {
		return e.Str(key, val)
	}
	return e.Str(key, cut).Bool(key+auditlog.TruncatedSuffix, true).Int(key+auditlog.LengthSuffix, len(val))
}

// strs adds a bounded list: at most auditlog.MaxListEntries entries, each cut to
// auditlog.MaxListEntryBytes; a cut list is marked KEY_truncated with KEY_length,
// the original number of entries.
func (w fieldWriter) strs(e *zerolog.Event, key string, vals []string) *zerolog.Event {
	total, cut := len(vals), false
	if total > auditlog.MaxListEntries {
		vals, cut = vals[:auditlog.MaxListEntries], true
	}
	var out []string // a copy, made only when an entry is cut
	for i, v := range vals {
		if c, ok := cutEncoded(v, auditlog.MaxListEntryBytes); !ok {
			if out == nil {
				out = append([]string(nil), vals...)
			}
			out[i], cut = c, true
		}
	}
	if out == nil {
		out = vals
	}
	e = e.Strs(key, out)
	if cut {
		e = e.Bool(key+auditlog.TruncatedSuffix, true).Int(key+auditlog.LengthSuffix, total)
	}
	return e
}

// cutEncoded returns the longest prefix of s whose JSON encoding (as
// zerolog writes it, quotes excluded) fits in max octets, cut on a UTF-8
// boundary, and whether that is all of s.
func cutEncoded(s string, max int) (string, bool) {
	if len(s) <= max/6 {
		return s, true // even all-escaped it fits
	}
	cost := 0
	for i := 0; i < len(s); {
		c := s[i]
		n, size := 1, 1
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n = 2
		case c < 0x20:
			n = 6 // \u00XX
		case c >= utf8.RuneSelf:
			r, sz := utf8.DecodeRuneInString(s[i:])
			size, n = sz, sz
			if r == utf8.RuneError && sz == 1 {
				n = 6 // \ufffd
			}
		}
		if cost+n > max {
			return s[:i], false
		}
		cost += n
		i += size
	}
	return s, true
}
