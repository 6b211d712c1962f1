package robots

import "strings"

// Content-Signal records are Cloudflare's Content Signals Policy
// (contentsignals.org, September 2025): a group carries a line such as
//
//	Content-Signal: search=yes, ai-train=no, ai-input=no
//
// whose signals say whether content may be collected for a use: "yes" for
// allowed, "no" for not, and no signal for no preference. The policy
// defines search, ai-input and ai-train; Cloudflare's managed robots.txt
// also writes use=immediate|reference|full. The policy text defines no
// path form: a Content-Signal line applies to its whole group.
//
// Grammar read here (the published examples, with leniency for white
// space, case and empty entries):
//
//	content-signal = [ entry *( *WS "," *WS [ entry ] ) ]
//	entry          = key *WS "=" *WS value
//	key, value     = 1*( ALPHA / DIGIT / "-" / "_" / "." )
//
// An entry of another shape is ignored and makes the line malformed
// (ParseContentSignal reports it); the line's other entries still count.

// ContentSignal is one signal of a Content-Signal record.
type ContentSignal struct {
	// Key is the signal's name, lower-cased ("ai-train").
	Key string
	// Value is its value as written ("no", "reference").
	Value string
	// Line is the 1-based line of the record; 0 from ParseContentSignal.
	Line int
}

// Pref reads the value: "yes" allows the use, "no" does not, any other
// value says nothing about it (compared case-insensitively).
func (s ContentSignal) Pref() Pref {
	switch {
	case strings.EqualFold(s.Value, "yes"):
		return PrefAllow
	case strings.EqualFold(s.Value, "no"):
		return PrefDisallow
	}
	return PrefUnknown
}

// ParseContentSignal parses the value of a Content-Signal record into its
// signals, in order, and reports whether every entry was well-formed (see
// the grammar above). Keys are lower-cased. It allocates.
func ParseContentSignal(v string) ([]ContentSignal, bool) {
	var out []ContentSignal
	ok := eachSignal(v, func(key, value string) {
		out = append(out, ContentSignal{Key: strings.ToLower(key), Value: value})
	})
	return out, ok
}

// eachSignal calls f with the key and value of each well-formed entry of a
// Content-Signal value and reports whether every entry was well-formed.
func eachSignal(v string, f func(key, value string)) bool {
	ok := true
	for v != "" {
		entry, rest, _ := strings.Cut(v, ",")
		v = rest
		entry = trimWS(entry)
		if entry == "" {
			continue
		}
		key, value, found := strings.Cut(entry, "=")
		key, value = trimWS(key), trimWS(value)
		if !found || !isSignalWord(key) || !isSignalWord(value) {
			ok = false
			continue
		}
		f(key, value)
	}
	return ok
}

// isSignalWord reports whether s is a non-empty run of ALPHA, DIGIT, "-",
// "_" and ".".
func isSignalWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// ContentSignal returns the signal named key (case-insensitively) of the
// Content-Signal lines that apply (see Extras), and reports whether any of
// them has it. When several do, they combine as
// draft-ietf-aipref-vocab-07 section 5.1 combines preferences: any "no"
// wins, then any "yes"; among other values the first in file order wins.
// Line is the line of the signal that won, the first in file order among
// equals. It does not allocate.
func (e GroupExtras) ContentSignal(key string) (ContentSignal, bool) {
	var best ContentSignal
	var v recView
	for i := 0; i < e.refs.n; i++ {
		if e.refs.view(e.a, i, &v); v.kind != recContentSignal {
			continue
		}
		eachSignal(v.value, func(k, value string) {
			if !strings.EqualFold(k, key) {
				return
			}
			s := ContentSignal{Key: key, Value: value, Line: v.line}
			if best.Line == 0 || signalRank(s) > signalRank(best) {
				best = s
			}
		})
	}
	if best.Line == 0 {
		return best, false
	}
	best.Key = strings.ToLower(best.Key)
	return best, true
}

// signalRank orders signals for combining: "no" over "yes" over others.
func signalRank(s ContentSignal) int {
	switch s.Pref() {
	case PrefDisallow:
		return 2
	case PrefAllow:
		return 1
	}
	return 0
}

// ContentSignals returns every signal of the Content-Signal lines that
// apply, by lower-cased key, each combined as ContentSignal combines it;
// nil when there is none. It allocates.
func (e GroupExtras) ContentSignals() map[string]ContentSignal {
	var out map[string]ContentSignal
	var v recView
	for i := 0; i < e.refs.n; i++ {
		if e.refs.view(e.a, i, &v); v.kind != recContentSignal {
			continue
		}
		eachSignal(v.value, func(k, value string) {
			k = strings.ToLower(k)
			s := ContentSignal{Key: k, Value: value, Line: v.line}
			if best, ok := out[k]; ok && signalRank(s) <= signalRank(best) {
				return
			}
			if out == nil {
				out = map[string]ContentSignal{}
			}
			out[k] = s
		})
	}
	return out
}
