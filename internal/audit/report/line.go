package report

import (
	"bytes"
	"errors"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// record is the part of one audit line the report reads. Its byte slices
// alias the line's buffer (or a buffer of their own when a string had
// escapes) and are valid until the next line is read.
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
	user         []byte // the proxy user
	price        []byte // pay per crawl: price, charged, currency, not_paid
	charged      []byte
	currency     []byte
	notPaid      []byte
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

// Line errors: why a line was skipped. The first four are
// auditlog.Scanner's.
var (
	errTruncated  = auditlog.ErrTruncated
	errNotJSON    = auditlog.ErrSyntax
	errBadField   = auditlog.ErrType
	errTooLong    = auditlog.ErrTooLong
	errNoDecision = errors.New("no decision field")
	errNoTime     = errors.New("no time field")
	errBadTime    = errors.New("time is not RFC 3339")
)

// parseRecord reads the fields the report needs from one JSON object
// through auditlog.Scanner: a line is accepted exactly when encoding/json
// accepts it, and a key that repeats counts with its last value (null:
// the zero value, or absent for time and decision).
func parseRecord(b []byte, r *record) error {
	*r = record{enforced: true}
	var sc auditlog.Scanner
	sc.Reset(b)
	for sc.Next() {
		if err := r.value(&sc); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	switch {
	case !r.hasTime:
		return errNoTime
	case !r.hasDecision:
		return errNoDecision
	}
	return nil
}

// value reads the current member of sc into r, or leaves it to be skipped.
func (r *record) value(sc *auditlog.Scanner) error {
	var dst *[]byte
	key := sc.Key()
	switch string(key) {
	case auditlog.FieldTime:
		r.hasTime = false
		if sc.Null() {
			return nil
		}
		v, err := sc.Str()
		if err != nil {
			return err
		}
		ts, ok := parseRFC3339(v)
		if !ok {
			return errBadTime
		}
		r.ts, r.hasTime = ts, true
		return nil
	case auditlog.FieldEnforced:
		r.enforced = true // absent or null: enforced
		if sc.Null() {
			return nil
		}
		var err error
		r.enforced, err = sc.Bool()
		return err
	case auditlog.FieldRuleLine:
		r.ruleLine = 0
		if sc.Null() {
			return nil
		}
		var err error
		r.ruleLine, err = sc.Int()
		return err
	case auditlog.FieldURL:
		dst = &r.url
	case auditlog.FieldDecision:
		dst = &r.decision
	case auditlog.FieldReason:
		dst = &r.reason
	case auditlog.FieldRobotsReason:
		dst = &r.robotsReason
	case auditlog.FieldToken:
		dst = &r.token
	case auditlog.FieldTokenSource:
		dst = &r.tokenSource
	case auditlog.FieldRobotsURL:
		dst = &r.robotsURL
	case auditlog.FieldRule:
		dst = &r.rule
	case auditlog.FieldAccess:
		dst = &r.access
	case auditlog.FieldRobotsSHA256:
		dst = &r.sha
	case auditlog.FieldUser:
		dst = &r.user
	case auditlog.FieldPrice:
		dst = &r.price
	case auditlog.FieldCharged:
		dst = &r.charged
	case auditlog.FieldCurrency:
		dst = &r.currency
	case auditlog.FieldNotPaid:
		dst = &r.notPaid
	default:
		if !bytes.HasSuffix(key, []byte(auditlog.TruncatedSuffix)) || sc.Null() {
			return nil // skipped by sc.Next
		}
		cut, err := sc.Bool()
		r.cut = r.cut || cut
		return err
	}
	*dst = nil
	if dst == &r.decision {
		r.hasDecision = false
	}
	if sc.Null() {
		return nil
	}
	v, err := sc.Str()
	if err != nil {
		return err
	}
	*dst = v
	if dst == &r.decision {
		r.hasDecision = true
	}
	return nil
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
