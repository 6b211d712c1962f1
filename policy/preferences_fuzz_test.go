package policy_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
)

// FuzzFromHeader: a Content-Usage response header field never panics and
// states only "y" or "n" for the vocab labels.
func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"train-ai=n, search=y", "train-ai=y;q=1", "train-ai=(n y)", "search=?1",
		"train-ai=\"n\"", "a=%\"%c3%a9\"", "*=n", "train-ai=n,", ""} {
		f.Add(s, "search=n")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range policy.HeaderPreferences([]string{a, b}) {
			if s.Value != policy.UsageYes && s.Value != policy.UsageNo || s.Purpose != policy.PurposeTrainAI && s.Purpose != policy.PurposeSearch ||
				s.Source != policy.SourceHeader {
				t.Errorf("FromHeader(%q, %q): statement %+v", a, b, s)
			}
		}
	})
}
