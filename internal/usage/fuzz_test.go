package usage_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/usage"
)

// FuzzFromHeader: a Content-Usage response header field never panics and
// states only "y" or "n" for the vocab labels.
func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"train-ai=n, search=y", "train-ai=y;q=1", "train-ai=(n y)", "search=?1",
		"train-ai=\"n\"", "a=%\"%c3%a9\"", "*=n", "train-ai=n,", ""} {
		f.Add(s, "search=n")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range usage.FromHeader([]string{a, b}) {
			if s.Value != usage.Yes && s.Value != usage.No || s.Purpose != usage.TrainAI && s.Purpose != usage.Search ||
				s.Source != usage.SourceHeader {
				t.Errorf("FromHeader(%q, %q): statement %+v", a, b, s)
			}
		}
	})
}
