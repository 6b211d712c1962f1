package usage

import (
	"strings"

	"github.com/robotsproxy/robotsproxy/robots"
)

// signalKeys maps Content-Signal keys onto purposes (see the package
// documentation).
var signalKeys = [...]struct{ key, purpose string }{
	{"ai-train", TrainAI},
	{"search", Search},
	{"ai-input", AIInput},
}

// vocabLabels are the purposes Content-Usage states preferences for: the
// labels of draft-ietf-aipref-vocab-07 6.1.
var vocabLabels = [...]string{TrainAI, Search}

// FromRobots returns the preferences robots.txt states for one request:
// the Content-Usage rules that apply to its path (u, from Robots.Usage:
// none when the path is disallowed, attach-05 3.1), then the Content-Signal
// signals of the groups that apply (e, from Robots.Extras), mapped onto
// purposes. It allocates only when something is stated.
func FromRobots(u robots.UsagePrefs, e robots.GroupExtras) Preferences {
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

// FromHeader returns the preferences a Content-Usage response header field
// states (draft-ietf-aipref-attach-05 section 2: an RFC 9651 Dictionary in
// the vocab-07 section 6 form, e.g. "train-ai=n, search=y"). Several field
// lines are one field, joined with ", " (RFC 9110 5.3). A field that does
// not parse states nothing (vocab-07 6.5.1).
func FromHeader(values []string) Preferences {
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

func value(p robots.Pref) Value {
	switch p {
	case robots.PrefAllow:
		return Yes
	case robots.PrefDisallow:
		return No
	}
	return Unknown
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
