package audit

import (
	"encoding/json"
	"errors"
	"strconv"
	"unsafe"
)

// A hand-written reader for audit lines: verify reads every line of a log,
// and encoding/json (which validates the whole line, then decodes it)
// held it to 130,000 lines/s. This reads the fields auditLine has and
// skips the others by their extent. It accepts every valid JSON object
// (a repeated key: the last wins, as in encoding/json), checks skipped
// values for their extent only, and never panics.

var (
	errTruncated = errors.New("the line ends inside a value")
	errBadType   = errors.New("a field has the wrong type")
	errTooDeep   = errors.New("values nested too deep")
)

// maxDepth bounds the nesting of skipped values.
const maxDepth = 64

// interner returns one string for each distinct value: most fields of a
// log repeat (decision, reason, robots_url, robots_sha256, ...), so
// reading them allocates only the first time. Bounded by maxInterned
// values of at most maxInternedLen octets each; a longer value (a long
// url, once per line anyway) is not kept.
type interner map[string]string

const (
	maxInterned    = 1 << 14
	maxInternedLen = 4 << 10
)

func (in interner) get(b []byte) string {
	if len(b) > maxInternedLen {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	if len(in) >= maxInterned {
		clear(in)
	}
	s := string(b)
	in[s] = s
	return s
}

// parseLine decodes one line (without its newline) into l, keeping the
// backing array of l.Candidates. in interns repeated values; nil interns
// nothing.
func parseLine(b []byte, l *auditLine, in interner) error {
	*l = auditLine{Candidates: l.Candidates[:0], in: in}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		var err error
		if i, err = l.members(b, i); err != nil {
			return err
		}
	}
	if skipWS(b, i) != len(b) {
		return errNotObject
	}
	return nil
}

// members reads `"key": value` pairs from b[i:] through the closing brace
// and returns the index after it.
func (l *auditLine) members(b []byte, i int) (int, error) {
	for {
		raw, esc, j, err := readRaw(b, i)
		if err != nil {
			return 0, err
		}
		key := unsafeString(raw)
		if esc {
			if key, _, err = readString(b, i, nil); err != nil {
				return 0, err
			}
		}
		j = skipWS(b, j)
		if j >= len(b) || b[j] != ':' {
			return 0, errNotObject
		}
		if i, err = l.value(key, b, skipWS(b, j+1)); err != nil {
			return 0, err
		}
		i = skipWS(b, i)
		switch {
		case i >= len(b):
			return 0, errTruncated
		case b[i] == '}':
			return i + 1, nil
		case b[i] != ',':
			return 0, errNotObject
		}
		i = skipWS(b, i+1)
	}
}

// value reads the value of key at b[i:] into l, or skips it.
func (l *auditLine) value(key string, b []byte, i int) (int, error) {
	var s *string
	var flag *bool
	switch key {
	case "method":
		s = &l.Method
	case "url":
		s = &l.URL
	case "decision":
		s = &l.Decision
	case "reason":
		s = &l.Reason
	case "robots_url":
		s = &l.RobotsURL
	case "group":
		s = &l.Group
	case "rule":
		s = &l.Rule
	case "access_result":
		s = &l.Access
	case "robots_sha256":
		s = &l.RobotsSHA256
	case "robots_fetched_at":
		s = &l.RobotsFetchedAt
	case "robots_reason":
		s = &l.RobotsReason
	case "usage_refused":
		s = &l.UsageRefused
	case "purposes":
		return l.strings(&l.Purposes, b, i)
	case "url_truncated":
		flag = &l.URLTruncated
	case "candidates_truncated":
		flag = &l.CandidatesTruncated
	case "robots_url_truncated":
		flag = &l.RobotsURLTruncated
	case "group_truncated":
		flag = &l.GroupTruncated
	case "rule_truncated":
		flag = &l.RuleTruncated
	case "star_fallback":
		flag = &l.StarFallback
	case "candidates":
		return l.candidates(b, i)
	case "rule_line", "robots_status":
		return l.integer(key, b, i)
	default:
		return skipValue(b, i, 0)
	}
	if s != nil {
		in := l.in
		if s == &l.URL {
			in = nil // a different URL on most lines
		}
		v, j, err := readString(b, i, in)
		if err == errBadType && isNull(b, i) {
			*s = ""
			return i + 4, nil
		}
		*s = v
		return j, err
	}
	switch {
	case hasWord(b, i, "true"):
		*flag = true
		return i + 4, nil
	case hasWord(b, i, "false"):
		*flag = false
		return i + 5, nil
	case isNull(b, i):
		return i + 4, nil
	}
	return 0, errBadType
}

// candidates reads an array of strings (or null).
func (l *auditLine) candidates(b []byte, i int) (int, error) {
	return l.strings(&l.Candidates, b, i)
}

// strings reads an array of strings (or null) at b[i:] onto *dst.
func (l *auditLine) strings(dst *[]string, b []byte, i int) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	if i >= len(b) || b[i] != '[' {
		return 0, errBadType
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		v, j, err := readString(b, i, l.in)
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, v)
		i = skipWS(b, j)
		switch {
		case i >= len(b):
			return 0, errTruncated
		case b[i] == ']':
			return i + 1, nil
		case b[i] != ',':
			return 0, errNotObject
		}
		i = skipWS(b, i+1)
	}
}

// integer reads rule_line or robots_status.
func (l *auditLine) integer(key string, b []byte, i int) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	j := i
	for j < len(b) && (b[j] == '-' || b[j] >= '0' && b[j] <= '9') {
		j++
	}
	n, err := strconv.Atoi(string(b[i:j]))
	if err != nil || j < len(b) && !isDelim(b[j]) {
		return 0, errBadType // 1.5, 1e3, "1", true: not an integer
	}
	if key == "rule_line" {
		l.RuleLine = n
	} else {
		l.RobotsStatus = &n
	}
	return j, nil
}

// readString reads the JSON string at b[i:] and returns it and the index
// after it. A string with escapes is decoded by encoding/json; one without
// is interned in in (when not nil).
func readString(b []byte, i int, in interner) (string, int, error) {
	raw, esc, j, err := readRaw(b, i)
	switch {
	case err != nil:
		return "", 0, err
	case esc:
		var s string
		if err := json.Unmarshal(b[i:j], &s); err != nil {
			return "", 0, errNotObject
		}
		return s, j, nil
	case in != nil:
		return in.get(raw), j, nil
	}
	return string(raw), j, nil
}

// readRaw returns the octets between the quotes of the JSON string at
// b[i:], whether it has escapes, and the index after it.
func readRaw(b []byte, i int) (raw []byte, escaped bool, next int, err error) {
	if i >= len(b) || b[i] != '"' {
		return nil, false, 0, errBadType
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			return b[i+1 : j], escaped, j + 1, nil
		case c < 0x20:
			return nil, false, 0, errNotObject
		}
	}
	return nil, false, 0, errTruncated
}

// unsafeString views b as a string, for a map key or a switch that does
// not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// skipValue returns the index after the JSON value at b[i:].
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errTruncated
	}
	switch c := b[i]; c {
	case '"':
		_, _, j, err := readRaw(b, i)
		return j, err
	case '{', '[':
		if depth >= maxDepth {
			return 0, errTooDeep
		}
		return skipContainer(b, i, depth)
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return 0, errNotObject
	}
	return j, nil
}

// skipContainer skips the object or array at b[i:].
func skipContainer(b []byte, i, depth int) (int, error) {
	end := byte(']')
	if b[i] == '{' {
		end = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, nil
	}
	for {
		var err error
		if end == '}' {
			if _, _, i, err = readRaw(b, i); err != nil {
				return 0, err
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return 0, errNotObject
			}
			i = skipWS(b, i+1)
		}
		if i, err = skipValue(b, i, depth+1); err != nil {
			return 0, err
		}
		i = skipWS(b, i)
		switch {
		case i >= len(b):
			return 0, errTruncated
		case b[i] == end:
			return i + 1, nil
		case b[i] != ',':
			return 0, errNotObject
		}
		i = skipWS(b, i+1)
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w && (i+len(w) == len(b) || isDelim(b[i+len(w)]))
}

func isNull(b []byte, i int) bool { return hasWord(b, i, "null") }

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
