package politeness_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// FuzzParseRetryAfter: an origin's Retry-After and Date never panic and
// never give a negative pause.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range []string{"120", "0", "-1", "1e3", "99999999999999999999", "Thu, 02 Jan 2025 03:05:05 GMT",
		"Thursday, 02-Jan-25 03:05:05 GMT", "Thu Jan  2 03:05:05 2025", " 5 ", ""} {
		f.Add(s, now.Format(http.TimeFormat))
	}
	f.Fuzz(func(t *testing.T, value, date string) {
		d, ok := politeness.ParseRetryAfter(value, date, now)
		if d < 0 || !ok && d != 0 {
			t.Errorf("ParseRetryAfter(%q, %q) = %v, %v", value, date, d, ok)
		}
	})
}
