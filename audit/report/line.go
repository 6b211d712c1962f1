package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// record is the part of one audit line the report reads. Its byte slices
// alias the line's buffer (or a fresh allocation when a string had escapes)
// and are valid until the next line is read.
type record struct {
	ts           int64 // Unix seconds
	url          []byte
	decision     []byte
	reason       []byte
	robotsReason []byte // robots_reason: robots.txt's, when reason is a politeness wait's cause
	token        []byte
	tokenSource  []byte
	robotsURL    []byte
	rule         []byte
	ruleLine     int64
	access       []byte
	sha          []byte
	enforced     bool // absent means true (lines written before report mode)
	hasDecision  bool
	hasTime      bool
	cut          bool // some FIELD_truncated was true
}

// robotsTxtReason is robots.txt's reason for the decision: robots_reason
// when the line has it (a request that waited for politeness is logged
// with the wait's cause, crawl-delay, backoff or host-concurrency, as its
// reason), else reason.
func (r *record) robotsTxtReason() []byte {
	if len(r.robotsReason) > 0 {
		return r.robotsReason
	}
	return r.reason
}

// Line errors: why a line was skipped.
var (
	errTruncated  = errors.New("truncated line")
	errNotJSON    = errors.New("not a JSON object")
	errBadField   = errors.New("a field has the wrong type")
	errNoDecision = errors.New("no decision field")
	errNoTime     = errors.New("no time field")
	errBadTime    = errors.New("time is not RFC 3339")
)

// parseRecord reads the fields the report needs from one JSON object,
// skipping the others without decoding them. It accepts every valid JSON
// object (duplicate keys: the last wins, as in encoding/json) and rejects
// input that ends early with errTruncated; other malformed input gives
// errNotJSON, though the values of fields it skips are checked only for
// their extent, not for full validity. It never panics.
func parseRecord(b []byte, r *record) error {
	*r = record{enforced: true}
	i := skipWS(b, 0)
	if i >= len(b) {
		return errNotJSON
	}
	if b[i] != '{' {
		return errNotJSON
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		var err error
		if i, err = parseMembers(b, i, r); err != nil {
			return err
		}
	}
	if skipWS(b, i) != len(b) {
		return errNotJSON
	}
	switch {
	case !r.hasTime:
		return errNoTime
	case !r.hasDecision:
		return errNoDecision
	}
	return nil
}

// parseMembers reads `"key": value` pairs from b[i:] through the closing
// brace and returns the index after it.
func parseMembers(b []byte, i int, r *record) (int, error) {
	for {
		key, esc, j, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		if esc {
			if key, err = unescape(b[i:j]); err != nil {
				return 0, err
			}
		}
		i = skipWS(b, j)
		if i >= len(b) {
			return 0, errTruncated
		}
		if b[i] != ':' {
			return 0, errNotJSON
		}
		if i, err = parseValue(b, skipWS(b, i+1), key, r); err != nil {
			return 0, err
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, errTruncated
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, errNotJSON
		}
	}
}

// parseValue reads the value at b[i:] for key into r and returns the
// index after it.
func parseValue(b []byte, i int, key []byte, r *record) (int, error) {
	var dst *[]byte
	switch string(key) {
	case "time":
		return parseTime(b, i, r)
	case "enforced":
		return parseBool(b, i, &r.enforced)
	case "rule_line":
		return parseInt(b, i, &r.ruleLine)
	case "url":
		dst = &r.url
	case "decision":
		dst = &r.decision
	case "reason":
		dst = &r.reason
	case "robots_reason":
		dst = &r.robotsReason
	case "product_token":
		dst = &r.token
	case "token_source":
		dst = &r.tokenSource
	case "robots_url":
		dst = &r.robotsURL
	case "rule":
		dst = &r.rule
	case "access_result":
		dst = &r.access
	case "robots_sha256":
		dst = &r.sha
	default:
		if bytes.HasSuffix(key, []byte("_truncated")) && bytes.HasPrefix(b[i:], []byte("true")) {
			r.cut = true
		}
		return skipValue(b, i)
	}
	if isNull(b, i) {
		return i + 4, nil
	}
	v, j, err := stringValue(b, i)
	if err != nil {
		return 0, err
	}
	*dst = v
	if dst == &r.decision {
		r.hasDecision = true
	}
	return j, nil
}

// stringValue reads a JSON string at b[i:], unescaped.
func stringValue(b []byte, i int) ([]byte, int, error) {
	if i >= len(b) {
		return nil, 0, errTruncated
	}
	if b[i] != '"' {
		if _, err := skipValue(b, i); err != nil {
			return nil, 0, err
		}
		return nil, 0, errBadField
	}
	v, esc, j, err := scanString(b, i)
	if err != nil || !esc {
		return v, j, err
	}
	v, err = unescape(b[i:j])
	return v, j, err
}

func isNull(b []byte, i int) bool { return bytes.HasPrefix(b[i:], []byte("null")) }

func parseTime(b []byte, i int, r *record) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	v, j, err := stringValue(b, i)
	if err != nil {
		return 0, err
	}
	ts, ok := parseRFC3339(v)
	if !ok {
		return 0, errBadTime
	}
	r.ts, r.hasTime = ts, true
	return j, nil
}

func parseBool(b []byte, i int, dst *bool) (int, error) {
	switch {
	case bytes.HasPrefix(b[i:], []byte("true")):
		*dst = true
		return i + 4, nil
	case bytes.HasPrefix(b[i:], []byte("false")):
		*dst = false
		return i + 5, nil
	case isNull(b, i):
		return i + 4, nil
	}
	if _, err := skipValue(b, i); err != nil {
		return 0, err
	}
	return 0, errBadField
}

func parseInt(b []byte, i int, dst *int64) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	j, err := skipValue(b, i)
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(string(b[i:j]), 10, 64)
	if perr != nil {
		return 0, errBadField
	}
	*dst = n
	return j, nil
}

// parseRFC3339 reads "2006-01-02T15:04:05Z" quickly and any other RFC 3339
// form (fractions, offsets) through package time.
func parseRFC3339(v []byte) (int64, bool) {
	if len(v) == 20 && v[4] == '-' && v[7] == '-' && v[10] == 'T' && v[13] == ':' && v[16] == ':' && v[19] == 'Z' {
		y, ok1 := digits(v[0:4])
		mo, ok2 := digits(v[5:7])
		d, ok3 := digits(v[8:10])
		h, ok4 := digits(v[11:13])
		mi, ok5 := digits(v[14:16])
		s, ok6 := digits(v[17:19])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(mo, y) && h < 24 && mi < 60 && s < 60 {
			return daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(v))
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func unescape(quoted []byte) ([]byte, error) {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return nil, errNotJSON
	}
	return []byte(s), nil
}
