package robots

// This file implements the Content-Usage rule of draft-ietf-aipref-attach-05
// (section 3) with the statements of preference of
// draft-ietf-aipref-vocab-07 (sections 3, 5 and 6): both of 19 August 2026,
// the newest revisions found. The drafts still change; the section numbers
// below are theirs.
//
//	content-usage = *WS "content-usage" *WS ":" *WS
//	                [ path-pattern 1*WS ] usage-pref EOL      (attach-05 3)
//
// The value (after comment removal, attach-05 3.2) starts with "/" when it
// has a path; the path then ends at the first SP or HTAB and the rest, past
// the white space, is the statement of preference: an RFC 9651 Dictionary
// such as "train-ai=n, search=y" (vocab-07 6). Any other first octet means
// the path is absent and the whole value is the statement.
//
// One departure: attach-05 adds Content-Usage to the ABNF's "rule", so that
// a user-agent line after it would start a new group. Here it ends no group,
// like every record other than allow and disallow (RFC 9309 2.2.4), so that
// the crawl rules of a file read the same to a parser that knows the draft
// and to one that does not (Google's robotstxt among them).

// Pref is a preference for a category of use (vocab-07 3): unknown, allow or
// disallow.
type Pref uint8

// The three preferences of vocab-07 section 3.
const (
	PrefUnknown Pref = iota
	PrefAllow
	PrefDisallow
)

// String returns "y" for PrefAllow, "n" for PrefDisallow and "unknown",
// the tokens of vocab-07 6.2.
func (p Pref) String() string {
	switch p {
	case PrefAllow:
		return "y"
	case PrefDisallow:
		return "n"
	}
	return "unknown"
}

// VocabLabels returns the usage category labels vocab-07 defines (6.1,
// table 1), AI model training and search: "train-ai", "search". Other
// labels are extensions that a caller may choose to understand (vocab-07
// 3.1, 6.4). It allocates a new slice.
func VocabLabels() []string { return []string{"train-ai", "search"} }

// Statement is a statement of preference in the exemplary serialization of
// vocab-07 section 6, an RFC 9651 Dictionary, as in the Content-Usage HTTP
// header field and robots.txt rule. Its zero value states nothing.
type Statement struct {
	text  string
	valid bool
}

// ParseStatement parses a statement of preference. It never fails: text
// that is not an RFC 9651 Dictionary gives a statement whose preferences
// are all unknown (vocab-07 6.5.1), and Valid reports false. It does not
// allocate.
func ParseStatement(text string) Statement {
	return Statement{text: text, valid: sfDict(text, nil)}
}

// Valid reports whether the statement parsed as an RFC 9651 Dictionary.
func (s Statement) Valid() bool { return s.valid }

// String returns the statement as written.
func (s Statement) String() string { return s.text }

// Pref returns the preference the statement states for a usage category
// label (vocab-07 6.5): the value of the dictionary's last member with that
// key, disregarding its parameters, is PrefAllow for the Token "y",
// PrefDisallow for "n", and PrefUnknown for anything else, for an absent
// key and for a statement that did not parse. Labels are case-sensitive.
// It does not allocate.
func (s Statement) Pref(label string) Pref {
	if !s.valid {
		return PrefUnknown
	}
	return statementPref(s.text, label)
}

// statementPref parses text as a statement of preference once and returns
// its preference for label (see Statement.Pref): PrefUnknown when text is
// not an RFC 9651 Dictionary.
func statementPref(text, label string) Pref {
	p := PrefUnknown
	ok := sfDict(text, func(m sfMember) {
		if m.key == label {
			p = memberPref(m)
		}
	})
	if !ok {
		return PrefUnknown
	}
	return p
}

// memberPref returns the preference a dictionary member states (vocab-07
// 6.5): the Token "y" or "n", else unknown.
func memberPref(m sfMember) Pref {
	switch {
	case m.isToken && m.token == "y":
		return PrefAllow
	case m.isToken && m.token == "n":
		return PrefDisallow
	}
	return PrefUnknown
}

// vocabPrefs parses a statement of preference once and returns its
// preferences for the labels of VocabLabels in one octet: bits 0-1 for
// "train-ai", 2-3 for "search", each a Pref; 0 when it does not parse.
// The parser stores it with each Content-Usage record (appendUsage), so
// that Get reads those labels without parsing a statement per request.
func vocabPrefs(statement string) byte {
	var train, search Pref
	ok := sfDict(statement, func(m sfMember) {
		switch m.key {
		case "train-ai":
			train = memberPref(m)
		case "search":
			search = memberPref(m)
		}
	})
	if !ok {
		return 0
	}
	return byte(train) | byte(search)<<2
}

// recordPref returns the preference the Content-Usage record v states for
// label: from the octet of vocabPrefs for the vocabulary's labels, else by
// parsing its statement once.
func recordPref(v *recView, label string) Pref {
	switch label {
	case "train-ai":
		return Pref(v.prefs & 3)
	case "search":
		return Pref(v.prefs >> 2 & 3)
	}
	_, st := splitUsage(v.value)
	return statementPref(st, label)
}

// appendUsage appends to a record of the records section (see compile.go,
// 5.) what follows the value of a Content-Usage rule: the normalised path
// pattern and the octet of vocabPrefs.
func appendUsage(recs []byte, value string) []byte {
	pat := usagePattern(value)
	_, st := splitUsage(value)
	recs = appendUvarint(recs, uint64(len(pat)))
	recs = append(recs, pat...)
	return append(recs, vocabPrefs(st))
}

// splitUsage splits the value of a Content-Usage rule into its path as
// written ("" when absent) and its statement of preference (attach-05 3.2).
func splitUsage(value string) (path, statement string) {
	if value == "" || value[0] != '/' {
		return "", value
	}
	i := 0
	for i < len(value) && value[i] != ' ' && value[i] != '\t' {
		i++
	}
	return value[:i], value[skipWS(value, i):]
}

// usagePattern returns the normalised path pattern of a Content-Usage value
// (attach-05 3.1: the percent-encoding of allow and disallow rules), "" when
// it has no path.
func usagePattern(value string) string {
	path, _ := splitUsage(value)
	if path == "" {
		return ""
	}
	return normalizePattern(path)
}

// MaxContentUsageRules is how many Content-Usage lines in groups a file
// keeps: the first 1024 in file order. Later ones are dropped and counted
// in Robots.Limited, as are those past Options.MaxRulesPerGroup in one
// group. It is a limit of this parser, not one of the Content-Usage rule
// of draft-ietf-aipref-attach-05 section 3, and guards each request as
// MaxRulesPerGroup guards the parser (RFC 9309 section 3): the rules with
// equally long matching paths all apply (attach-05 3.1), and a file within
// the parse limit could otherwise hold some 19,000 that tie, all read for
// every request. The limit is per file, not per group, because the groups
// that name one product token merge (RFC 9309 2.2.1) and their rules tie
// as one group's.
const MaxContentUsageRules = 1024

// keepUsage counts one more Content-Usage line of the current group and
// reports whether the parser keeps it: no more than MaxRulesPerGroup in a
// group and MaxContentUsageRules in the file. A line it drops is counted in
// Robots.Limited.
func (p *parser) keepUsage() bool {
	if p.usages >= p.opts.MaxRulesPerGroup || p.fileUsages >= MaxContentUsageRules {
		p.r.Limited++
		return false
	}
	p.usages++
	p.fileUsages++
	return true
}

// UsageRule is a Content-Usage rule (attach-05 3).
type UsageRule struct {
	// Line is the 1-based line of the rule.
	Line int
	// Path is the path pattern as written, "" when the rule has none.
	Path string
	// Pattern is Path normalised as allow and disallow patterns are
	// (see NormalizePath), "" when the rule has no path.
	Pattern string
	// Statement is the statement of preference.
	Statement Statement
	// Value is the rule's value as written, without comment and
	// surrounding white space: Path, white space and Statement.
	Value string
}

// Text returns the rule in a canonical form of the line as written:
// "Content-Usage: " and the value, e.g. "Content-Usage: /ai-ok/ train-ai=y".
func (u UsageRule) Text() string {
	if u.Value == "" {
		return "Content-Usage:"
	}
	return "Content-Usage: " + u.Value
}

// UsagePref is the preference for one label that applies to a path.
type UsagePref struct {
	// Label is the usage category label, e.g. "train-ai".
	Label string
	// Pref is the preference.
	Pref Pref
	// Line is the 1-based line of the Content-Usage rule that stated
	// Pref (the first in file order among those that did), 0 when Pref
	// is unknown.
	Line int

	// ref is 1 + the index in UsagePrefs.refs of that rule, 0 when Pref
	// is unknown (see UsagePrefs.RuleOf).
	ref int
}

// UsagePrefs are the usage preferences that apply to one path for one
// crawler, as Robots.Usage finds them.
type UsagePrefs struct {
	// Verdict is the crawl verdict for the path (Robots.Test). When it
	// disallows the path, no preference applies (attach-05 3.1).
	Verdict Verdict

	a string
	// refs are the Content-Usage records with the longest matching path,
	// in file order.
	refs recRefs
}

// Get returns the preference for a usage category label (vocab-07 6.1).
// Several rules with equally long matching paths combine as vocab-07 5.1
// says: any PrefDisallow wins, then any PrefAllow, else PrefUnknown. It
// does not allocate. For the labels of VocabLabels it parses no statement
// (Parse did, once per rule); for another it parses each rule's statement
// once.
func (u UsagePrefs) Get(label string) UsagePref {
	out := UsagePref{Label: label}
	var v recView
	for i := 0; i < u.refs.n; i++ {
		u.refs.view(u.a, i, &v)
		p := recordPref(&v, label)
		if p == PrefDisallow && out.Pref != PrefDisallow || p == PrefAllow && out.Pref == PrefUnknown {
			out.Pref, out.Line, out.ref = p, v.line, i+1
		}
		if out.Pref == PrefDisallow {
			break // nothing overrides it, and the first line is kept
		}
	}
	return out
}

// RuleOf returns the Content-Usage rule that stated p, a preference Get
// returned for u, without building the others as Rules does: the rule on
// line p.Line, read directly. It reports false when p is unknown, and when
// p did not come from u and u has no such rule where Get left it (the rule
// must be on line p.Line and state p.Pref for p.Label). It does not
// allocate.
func (u UsagePrefs) RuleOf(p UsagePref) (UsageRule, bool) {
	if p.ref < 1 || p.ref > u.refs.n || p.Pref == PrefUnknown {
		return UsageRule{}, false
	}
	var v recView
	u.refs.view(u.a, p.ref-1, &v)
	rule := usageRule(&v)
	if rule.Line != p.Line || rule.Statement.Pref(p.Label) != p.Pref {
		return UsageRule{}, false
	}
	return rule, true
}

// usageRule builds the rule of a Content-Usage record.
func usageRule(v *recView) UsageRule {
	path, st := splitUsage(v.value)
	return UsageRule{Line: v.line, Path: path, Pattern: v.pattern, Statement: ParseStatement(st), Value: v.value}
}

// ParseUsageRule parses the value of a Content-Usage rule (attach-05 3.2)
// as written, without comment: its path, if any, and its statement of
// preference. Line is 0. It allocates only to normalise a path with
// percent-encoding to change.
func ParseUsageRule(value string) UsageRule {
	path, st := splitUsage(value)
	return UsageRule{Path: path, Pattern: usagePattern(value), Statement: ParseStatement(st), Value: value}
}

// Rules returns the Content-Usage rules that apply, in file order: those
// with the longest matching path, nil when none does. It allocates.
func (u UsagePrefs) Rules() []UsageRule {
	var out []UsageRule
	var v recView
	for i := 0; i < u.refs.n; i++ {
		u.refs.view(u.a, i, &v)
		out = append(out, usageRule(&v))
	}
	return out
}

// HasContentUsage reports whether any group of the file has a
// Content-Usage rule (draft-ietf-aipref-attach-05 §3); when it has none,
// Usage finds no preference for any path, so a caller that only wants the
// preferences can skip the path match Usage makes.
func (r *Robots) HasContentUsage() bool { return r.extras&xUsage != 0 }

// HasCrawlDelay reports whether the file has a crawl-delay or request-rate
// record in a group; when it has none, Extras finds no crawl delay and no
// request rate for any crawler, so a caller that only wants those can skip
// its group selection.
func (r *Robots) HasCrawlDelay() bool { return r.extras&xDelay != 0 }

// HasContentSignal reports whether the file has any Content-Signal record
// (in a group or before the first). Extras reads them; a file without
// them, and without Content-Usage rules, states no usage preference.
func (r *Robots) HasContentSignal() bool { return r.extras&xSignal != 0 }

// Usage returns the usage preferences (attach-05 3.1) that apply to path
// for a crawler identified by the given product tokens. path is normalised
// as for Test, and the groups are those Test uses. When the path may be
// crawled, the Content-Usage rules of those groups whose path pattern
// matches path with the most octets apply (the matching of allow and
// disallow rules, RFC 9309 2.2.2 and 2.2.3); a rule without a path matches
// every path with zero octets. Content-Usage lines before the first
// user-agent line apply to no crawler.
//
// Usage does not allocate when path is already normalised and at most four
// rules tie, and does no more than Test for a file without Content-Usage
// rules.
func (r *Robots) Usage(path string, tokens ...string) UsagePrefs {
	var u UsagePrefs
	path = NormalizePath(path)
	r.decide(path, tokens, &u.Verdict)
	if !u.Verdict.Allowed || r.extras&xUsage == 0 {
		return u
	}
	var s groupSet
	r.selectGroups(tokens, &s)
	u.a = r.a
	best := -1
	it := recIter{a: r.a, i: int(r.records)}
	var v recView
	for it.next(&v) {
		if v.kind != recContentUsage || v.group < 0 || !s.has(v.group) {
			continue
		}
		n := len(v.pattern)
		if n < best || n > 0 && !matchWild(v.pattern, path) {
			continue
		}
		if n > best {
			best = n
			u.refs.reset()
		}
		u.refs.add(v.at)
	}
	return u
}
