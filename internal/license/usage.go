package license

import (
	"strings"

	"github.com/robotsproxy/robotsproxy/policy"
)

// purposeSet is a set of purposes of package usage, one bit each.
type purposeSet uint8

const (
	setTrainAI purposeSet = 1 << iota
	setSearch
	setAIInput
)

// rslUsages maps the RSL 1.0 usage values onto purposes (see the package
// documentation's table).
var rslUsages = map[string]purposeSet{
	"all":      setTrainAI | setSearch | setAIInput,
	"ai-all":   setTrainAI | setAIInput,
	"ai-train": setTrainAI,
	"search":   setSearch,
	"ai-input": setAIInput,
	"ai-index": 0,
}

// purposeBit returns the bit of a purpose of package usage, 0 for any
// other string.
func purposeBit(purpose string) purposeSet {
	switch purpose {
	case policy.PurposeTrainAI:
		return setTrainAI
	case policy.PurposeSearch:
		return setSearch
	case policy.PurposeAIInput:
		return setAIInput
	}
	return 0
}

// Purposes returns the purposes of package usage an RSL usage value
// stands for (case-insensitive), in policy.Purposes order; nil for
// "ai-index" and for values RSL 1.0 does not define.
func Purposes(value string) []string {
	set := rslUsages[strings.ToLower(value)]
	var out []string
	for _, p := range policy.Purposes() {
		if set&purposeBit(p) != 0 {
			out = append(out, p)
		}
	}
	return out
}

// parseUsages reads a usage list: values separated by commas or white
// space; unknown values add nothing.
func parseUsages(text string) purposeSet {
	var set purposeSet
	for _, v := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}) {
		set |= rslUsages[strings.ToLower(v)]
	}
	return set
}
