package politeness

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfterSeconds bounds the delay-seconds form before it is turned
// into a Duration (which overflows past about 292 years).
const maxRetryAfterSeconds = 1 << 31

// ParseRetryAfter reads a Retry-After field value (RFC 9110 10.2.3):
// delay-seconds (a non-negative integer) or an HTTP-date. A date is taken
// relative to the response's Date field when that parses (so that the
// origin's clock, not ours, measures it), else relative to now; a date in
// the past is 0. ok is false for an absent or invalid value.
func ParseRetryAfter(value, date string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if value[0] >= '0' && value[0] <= '9' {
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				return maxRetryAfterSeconds * time.Second, true
			}
			return 0, false
		}
		return time.Duration(min(n, maxRetryAfterSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d, err := http.ParseTime(strings.TrimSpace(date)); err == nil {
		now = d
	}
	return max(0, t.Sub(now)), true
}
