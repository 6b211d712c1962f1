package robots

import (
	"math"
	"time"
)

// RequestRate is a request-rate record: at most Requests requests per
// Period, during a time window of the day when HasWindow is set.
type RequestRate struct {
	// Requests is the number of requests allowed per Period, at least 1.
	Requests int
	// Period is the length of the period, at least one second.
	Period time.Duration
	// HasWindow is true when the record names a time window; From and To
	// are then its start and end as offsets from midnight (UTC in the
	// Extended Standard for Robot Exclusion, which introduced the record).
	// To is before From for a window that spans midnight.
	HasWindow bool
	From, To  time.Duration
	// Line is the 1-based line of the record; 0 from ParseRequestRate.
	Line int
}

// Interval returns the time between requests that the rate allows:
// Period / Requests.
func (r RequestRate) Interval() time.Duration {
	if r.Requests <= 0 {
		return 0
	}
	return r.Period / time.Duration(r.Requests)
}

// maxRateDigits bounds the digits of the numbers of a request rate, so that
// their product cannot overflow.
const maxRateDigits = 9

// ParseRequestRate parses the value of a request-rate record:
//
//	request-rate = requests *WS "/" *WS period [unit] [1*WS window]
//	requests     = 1*9DIGIT           ; at least 1
//	period       = 1*9DIGIT           ; at least 1
//	unit         = "s" / "m" / "h" / "d" ; case-insensitive; seconds when absent
//	window       = time "-" time      ; start and end of the time of day
//	time         = 3*4DIGIT           ; HMM or HHMM, hours 0-23, minutes 0-59
//
// so "1/5" (one request every 5 seconds), "1/5s", "10/1m", "1/1h" and
// "50/1m 2100-0459" are accepted. This is what Python's urllib.robotparser
// reads ("n/m", whole seconds, white space around "/"), together with what
// Protego 0.6.1 reads (a unit, a time window, no white space around "/").
// Zero requests or a zero period are not accepted.
func ParseRequestRate(v string) (RequestRate, bool) {
	var r RequestRate
	n, i, ok := rateNumber(v, 0)
	if !ok || n == 0 {
		return r, false
	}
	i = skipWS(v, i)
	if i >= len(v) || v[i] != '/' {
		return r, false
	}
	i = skipWS(v, i+1)
	per, i, ok := rateNumber(v, i)
	if !ok || per == 0 {
		return r, false
	}
	unit := int64(1)
	if i < len(v) {
		switch v[i] | 0x20 {
		case 's':
			i++
		case 'm':
			unit, i = 60, i+1
		case 'h':
			unit, i = 3600, i+1
		case 'd':
			unit, i = 86400, i+1
		}
	}
	r.Requests, r.Period = int(n), rateSeconds(per*unit)
	if i == len(v) {
		return r, true
	}
	if w := skipWS(v, i); w > i {
		if r.From, r.To, ok = parseWindow(v[w:]); ok {
			r.HasWindow = true
			return r, true
		}
	}
	return RequestRate{}, false
}

// rateSeconds converts seconds to a Duration, capped to the largest one.
func rateSeconds(s int64) time.Duration {
	if s > math.MaxInt64/int64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s) * time.Second
}

// rateNumber reads 1 to maxRateDigits digits at v[i:].
func rateNumber(v string, i int) (n int64, end int, ok bool) {
	start := i
	for ; i < len(v) && isDigit(v[i]); i++ {
		if i-start == maxRateDigits {
			return 0, i, false
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n, i, i > start
}

// skipWS skips RFC 9309 white space (space and tab) at v[i:].
func skipWS(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// parseWindow parses "HHMM-HHMM" (or HMM) into offsets from midnight.
func parseWindow(w string) (from, to time.Duration, ok bool) {
	for i := 0; i < len(w); i++ {
		if w[i] == '-' {
			from, ok1 := timeOfDay(w[:i])
			to, ok2 := timeOfDay(w[i+1:])
			return from, to, ok1 && ok2
		}
	}
	return 0, 0, false
}

// timeOfDay parses HMM or HHMM.
func timeOfDay(s string) (time.Duration, bool) {
	if len(s) < 3 || len(s) > 4 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	h, m := n/100, n%100
	if h > 23 || m > 59 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, true
}
