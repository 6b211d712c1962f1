package policy

import (
	"fmt"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// This file holds the usage preferences. Policy compares what a crawler's
// output is used for (the purposes an operator declares for it) with the
// usage preferences a site states: the Content-Usage rules of robots.txt
// (draft-ietf-aipref-attach-05 section 3, with the vocabulary of
// draft-ietf-aipref-vocab-07), the Content-Signal lines of Cloudflare's
// Content Signals Policy, and the Content-Usage HTTP response header
// field (attach-05 section 2).
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
// Preferences for one label combine as vocab-07 section 5.1 says: any "n"
// wins, then any "y", else the preference is unknown. So where the two
// robots.txt signals disagree, the more restrictive wins.

// The purposes, as declared in the configuration (usage.purposes,
// identity.users[].purposes, identity.client_ranges[].purposes).
const (
	// PurposeTrainAI is training AI models ("train-ai").
	PurposeTrainAI = rules.TrainAI
	// PurposeSearch is building a search index ("search").
	PurposeSearch = rules.Search
	// PurposeAIInput is feeding content into an AI model at answer time
	// ("ai-input").
	PurposeAIInput = rules.AIInput
)

// Purposes returns the labels a purpose may be declared as, in the order
// audit lines list them.
func Purposes() []string { return rules.Purposes() }

// IsPurpose reports whether s is one of Purposes.
func IsPurpose(s string) bool { return rules.IsPurpose(s) }

// UsageValue is a usage preference: "y" (the use is allowed), "n" (it is
// not), or "" (unknown: nothing stated).
type UsageValue string

// The preferences of vocab-07 section 3.
const (
	UsageUnknown UsageValue = ""
	UsageYes     UsageValue = "y"
	UsageNo      UsageValue = "n"
)

// UsageSource says where a usage preference was stated.
type UsageSource string

// Sources of statements.
const (
	// SourceContentUsage is a robots.txt Content-Usage rule.
	SourceContentUsage UsageSource = "content-usage"
	// SourceContentSignal is a robots.txt Content-Signal line.
	SourceContentSignal UsageSource = "content-signal"
	// SourceHeader is the response's Content-Usage header field; it comes
	// with the response, so it never decides the request it answers.
	SourceHeader UsageSource = "header"
)

// Statement is one usage preference a site stated for one purpose.
type Statement struct {
	// Purpose is the label it is about (one of Purposes).
	Purpose string
	// Value is the preference, UsageYes or UsageNo.
	Value UsageValue
	// Source is where it was stated.
	Source UsageSource
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

// Preferences are the usage preferences (statements) that apply to one
// request.
type Preferences []Statement

// Get returns the combined preference for purpose (any No wins, then any
// Yes, vocab-07 5.1) and the statement that decided it: the first in order
// among those with the winning value. ok is false when nothing was stated.
func (p Preferences) Get(purpose string) (UsageValue, Statement, bool) {
	return p.get(purpose, true)
}

// get is Get, leaving out the header field's statements unless header.
func (p Preferences) get(purpose string, header bool) (UsageValue, Statement, bool) {
	var best Statement
	found := false
	for _, s := range p {
		if s.Purpose != purpose || s.Source == SourceHeader && !header {
			continue
		}
		if !found || s.Value == UsageNo && best.Value != UsageNo {
			best, found = s, true
		}
	}
	return best.Value, best, found
}

// Values returns the combined preference of every purpose stated, by
// purpose; nil when nothing was.
func (p Preferences) Values() map[string]UsageValue {
	var out map[string]UsageValue
	for _, purpose := range Purposes() {
		if v, _, ok := p.Get(purpose); ok {
			if out == nil {
				out = make(map[string]UsageValue, 3)
			}
			out[purpose] = v
		}
	}
	return out
}

// Usage is the purposes declared for a crawler compared with the usage
// preferences and the RSL license that apply to one request (see
// DecideUsage, DecideLicense): the audit line's usage fields.
type Usage struct {
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
	// about the request (License.Source says which),
	// nil when none is named or no purpose is declared.
	License *License
	// LicenseLink is the license a response named in a Link header field
	// (rel="license", type="application/rsl+xml"): it comes with the
	// response, after the request was decided, so it cannot decide this
	// request; later requests for the resource read it (License.Source
	// LicenseFromLink).
	LicenseLink string
}

// EvaluateUsage compares purposes with prefs. Statements from the header field
// (SourceHeader) are left out: they come with the response, after the
// request was decided.
func EvaluateUsage(purposes []string, prefs Preferences) Usage {
	e := Usage{Purposes: purposes, Prefs: prefs}
	for _, purpose := range purposes {
		if v, s, ok := prefs.get(purpose, false); ok && v == UsageNo {
			e.Refused, e.Deciding = purpose, s
			return e
		}
	}
	return e
}

// Empty reports whether e has nothing to record: no purpose
// declared and no preference stated.
func (e *Usage) Empty() bool { return len(e.Purposes) == 0 && len(e.Prefs) == 0 }

// signalKeys maps Content-Signal keys onto purposes (see above).
var signalKeys = [...]struct{ key, purpose string }{
	{"ai-train", PurposeTrainAI},
	{"search", PurposeSearch},
	{"ai-input", PurposeAIInput},
}

// vocabLabels are the purposes Content-Usage states preferences for: the
// labels of draft-ietf-aipref-vocab-07 6.1.
var vocabLabels = [...]string{PurposeTrainAI, PurposeSearch}

// RobotsPreferences returns the usage preferences robots.txt states for one request:
// the Content-Usage rules that apply to its path (u, from Robots.Usage:
// none when the path is disallowed, attach-05 3.1), then the Content-Signal
// signals of the groups that apply (e, from Robots.Extras), mapped onto
// purposes. It allocates only when something is stated.
func RobotsPreferences(u robots.UsagePrefs, e robots.GroupExtras) Preferences {
	var out Preferences
	for _, label := range vocabLabels {
		p := u.Get(label)
		if p.Pref == robots.PrefUnknown {
			continue
		}
		out = append(out, Statement{Purpose: label, Value: value(p.Pref), Source: SourceContentUsage,
			Line: p.Line, Text: ruleText(u, p)})
	}
	for _, k := range signalKeys {
		s, ok := e.ContentSignal(k.key)
		if !ok || s.Pref() == robots.PrefUnknown {
			continue
		}
		out = append(out, Statement{Purpose: k.purpose, Value: value(s.Pref()), Source: SourceContentSignal,
			Line: s.Line, Text: "Content-Signal: " + s.Key + "=" + s.Value})
	}
	return out
}

// ruleText returns the text of the rule that stated p (UsagePrefs.RuleOf:
// that rule alone is read), "Content-Usage" when there is none.
func ruleText(u robots.UsagePrefs, p robots.UsagePref) string {
	if r, ok := u.RuleOf(p); ok {
		return r.Text()
	}
	return "Content-Usage"
}

// HeaderPreferences returns the usage preferences a Content-Usage response header field
// states (draft-ietf-aipref-attach-05 section 2: an RFC 9651 Dictionary in
// the vocab-07 section 6 form, e.g. "train-ai=n, search=y"). Several field
// lines are one field, joined with ", " (RFC 9110 5.3). A field that does
// not parse states nothing (vocab-07 6.5.1).
func HeaderPreferences(values []string) Preferences {
	if len(values) == 0 {
		return nil
	}
	field := strings.Join(values, ", ")
	st := robots.ParseStatement(field)
	var out Preferences
	for _, label := range vocabLabels {
		if p := st.Pref(label); p != robots.PrefUnknown {
			out = append(out, Statement{Purpose: label, Value: value(p), Source: SourceHeader,
				Text: "Content-Usage: " + field})
		}
	}
	return out
}

func value(p robots.Pref) UsageValue {
	switch p {
	case robots.PrefAllow:
		return UsageYes
	case robots.PrefDisallow:
		return UsageNo
	}
	return UsageUnknown
}

// SignalKey returns the Content-Signal key of a purpose ("ai-train" for
// "train-ai"), "" for a label that is no purpose.
func SignalKey(purpose string) string {
	for _, k := range signalKeys {
		if k.purpose == purpose {
			return k.key
		}
	}
	return ""
}
