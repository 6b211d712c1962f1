// Package usage compares what a crawler's output is used for (the purposes
// an operator declares for it) with the usage preferences a site states:
// the Content-Usage rules of robots.txt (draft-ietf-aipref-attach-05
// section 3, with the vocabulary of draft-ietf-aipref-vocab-07), the
// Content-Signal lines of Cloudflare's Content Signals Policy, and the
// Content-Usage HTTP response header field (attach-05 section 2).
//
// # Labels
//
// Purposes are the usage category labels of vocab-07 section 6.1, plus
// the one Content Signals label that has no vocab-07 counterpart:
//
//	purpose    Content-Usage (vocab-07)   Content-Signal
//	train-ai   train-ai                   ai-train
//	search     search                     search
//	ai-input   (none)                     ai-input
//
// Content-Usage values are "y" and "n"; Content-Signal values "yes" and
// "no" are read as "y" and "n". Other labels, keys and values state
// nothing and are ignored (vocab-07 6.4).
//
// # Combining
//
// Preferences for one label combine as vocab-07 section 5.1 says: any "n"
// wins, then any "y", else the preference is unknown. So where the two
// robots.txt signals disagree, the more restrictive wins.
package usage

import (
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// The purposes, as declared in the configuration (rules.TrainAI,
// rules.Search, rules.AIInput).
const (
	// TrainAI is training AI models.
	TrainAI = rules.TrainAI
	// Search is building a search index.
	Search = rules.Search
	// AIInput is feeding content into an AI model at answer time.
	AIInput = rules.AIInput
)

// Purposes returns the labels a purpose may be declared as, in the order
// audit lines list them (rules.Purposes).
func Purposes() []string { return rules.Purposes() }

// IsPurpose reports whether s is one of Purposes (rules.IsPurpose).
func IsPurpose(s string) bool { return rules.IsPurpose(s) }

// Value is a preference: "y" (the use is allowed), "n" (it is not), or ""
// (unknown: nothing stated).
type Value string

// The preferences of vocab-07 section 3.
const (
	Unknown Value = ""
	Yes     Value = "y"
	No      Value = "n"
)

// Source says where a statement came from.
type Source string

// Sources of statements.
const (
	// SourceContentUsage is a robots.txt Content-Usage rule.
	SourceContentUsage Source = "content-usage"
	// SourceContentSignal is a robots.txt Content-Signal line.
	SourceContentSignal Source = "content-signal"
	// SourceHeader is the response's Content-Usage header field; it comes
	// with the response, so it never decides the request it answers.
	SourceHeader Source = "header"
)

// Statement is one preference a site stated for one purpose.
type Statement struct {
	// Purpose is the label it is about (one of Purposes).
	Purpose string
	// Value is the preference, Yes or No.
	Value Value
	// Source is where it was stated.
	Source Source
	// Line is the 1-based robots.txt line, 0 for the header field.
	Line int
	// Text is the rule, line or field as written, e.g.
	// "Content-Usage: /docs/ train-ai=n".
	Text string
}

// String returns "line N: TEXT" for robots.txt, "header: TEXT" for the
// header field.
func (s Statement) String() string {
	if s.Source == SourceHeader {
		return "header: " + s.Text
	}
	return fmt.Sprintf("line %d: %s", s.Line, s.Text)
}

// Preferences are the statements that apply to one request.
type Preferences []Statement

// Get returns the combined preference for purpose (any No wins, then any
// Yes, vocab-07 5.1) and the statement that decided it: the first in order
// among those with the winning value. ok is false when nothing was stated.
func (p Preferences) Get(purpose string) (Value, Statement, bool) {
	return p.get(purpose, true)
}

// get is Get, leaving out the header field's statements unless header.
func (p Preferences) get(purpose string, header bool) (Value, Statement, bool) {
	var best Statement
	found := false
	for _, s := range p {
		if s.Purpose != purpose || s.Source == SourceHeader && !header {
			continue
		}
		if !found || s.Value == No && best.Value != No {
			best, found = s, true
		}
	}
	return best.Value, best, found
}

// Values returns the combined preference of every purpose stated, by
// purpose; nil when nothing was.
func (p Preferences) Values() map[string]Value {
	var out map[string]Value
	for _, purpose := range Purposes() {
		if v, _, ok := p.Get(purpose); ok {
			if out == nil {
				out = make(map[string]Value, 3)
			}
			out[purpose] = v
		}
	}
	return out
}

// Evaluation compares declared purposes with preferences.
type Evaluation struct {
	// Purposes are the purposes declared for the crawler, nil for none.
	Purposes []string
	// Prefs are the preferences that applied.
	Prefs Preferences
	// Refused is the first declared purpose (in declared order) whose
	// combined preference is No, "" when none is.
	Refused string
	// Deciding is the statement that refused it.
	Deciding Statement
	// License is what the RSL license robots.txt names, or an earlier
	// response for the same resource named in a Link header field, says
	// about the request (see package license; License.Source says which),
	// nil when none is named or no purpose is declared.
	License *License
	// LicenseLink is the license a response named in a Link header field
	// (rel="license", type="application/rsl+xml"): it comes with the
	// response, after the request was decided, so it cannot decide this
	// request; later requests for the resource read it (License.Source
	// LicenseFromLink).
	LicenseLink string
}

// Evaluate compares purposes with prefs. Statements from the header field
// (SourceHeader) are left out: they come with the response, after the
// request was decided.
func Evaluate(purposes []string, prefs Preferences) Evaluation {
	e := Evaluation{Purposes: purposes, Prefs: prefs}
	for _, purpose := range purposes {
		if v, s, ok := prefs.get(purpose, false); ok && v == No {
			e.Refused, e.Deciding = purpose, s
			return e
		}
	}
	return e
}

// Empty reports whether the evaluation has nothing to record: no purpose
// declared and no preference stated.
func (e *Evaluation) Empty() bool { return len(e.Purposes) == 0 && len(e.Prefs) == 0 }
