package robots

import (
	"slices"
	"strings"
)

// Rule is one allow or disallow line of a group (RFC 9309 2.2.2).
type Rule struct {
	// Allow is true for an allow rule, false for a disallow rule.
	Allow bool
	// Pattern is the path pattern after percent-encoding normalisation
	// (see NormalizePath), with "*" wildcards and an optional final "$".
	// Its length in octets is the rule's specificity.
	Pattern string
	// Text is the rule line as written, without comment and surrounding
	// white space, e.g. "Disallow: /private/".
	Text string
	// Line is the 1-based line number of the rule in the file.
	Line int

	pat pattern
}

// Group is one group of the file (RFC 9309 2.1): user-agent lines followed
// by rules.
type Group struct {
	// Agents are the product tokens of the group's user-agent lines as
	// written (case kept), "*" for the catch-all group.
	Agents []string
	// Line is the 1-based line number of the group's first user-agent line.
	Line int
	// Rules are the group's allow and disallow rules in file order.
	Rules []*Rule
}

// Record is a line that is neither a user-agent line nor a rule, such as
// "crawl-delay: 10" or "host: example.com" (RFC 9309 2.2.4). It is kept for
// callers and never affects matching.
type Record struct {
	// Key is the record's key, lower-cased ("crawl-delay").
	Key string
	// Value is the value with surrounding white space removed.
	Value string
	// Line is the 1-based line number.
	Line int
	// Group is the index in Robots.Groups of the group the record appeared
	// in, or -1 when it came before the first user-agent line.
	Group int
}

// ruleSet is the merged view of every group that names one product token:
// RFC 9309 2.2.1 requires such groups to be combined into one.
type ruleSet struct {
	// agent is the lower-cased product token, or "*".
	agent string
	// rules are sorted so that the first one that matches decides: longest
	// pattern first, and allow before disallow at equal length (2.2.2).
	rules []*Rule
	// groups are the indexes into Robots.Groups of the merged groups.
	groups []int
}

// Robots is a compiled robots.txt file. It is immutable once returned by
// Parse, and safe for concurrent use.
type Robots struct {
	// Groups are the file's groups in order.
	Groups []Group
	// Sitemaps are the values of sitemap records, in order.
	Sitemaps []string
	// Records are the other records, in order (crawl-delay, host, ...).
	Records []Record
	// Size is the number of octets parsed: at most the parse limit.
	Size int
	// Truncated is true when the body was longer than the parse limit and
	// its tail was ignored (RFC 9309 2.5).
	Truncated bool
	// Ignored counts lines that were neither empty, a comment, nor a
	// parseable record, plus rules outside any group.
	Ignored int
	// Limited counts lines truncated by Options.MaxLineBytes and rules
	// dropped by Options.MaxRulesPerGroup.
	Limited int

	// byAgent maps a lower-cased product token, "*" included, to the merged
	// rules of all the groups that name it.
	byAgent map[string]*ruleSet
}

// Verdict is the answer of Test: whether a path may be fetched, and why.
type Verdict struct {
	// Allowed is the decision.
	Allowed bool
	// Rule is the deciding rule (the longest match), or nil when no rule
	// matched or the path is /robots.txt.
	Rule *Rule
	// Agent is the lower-cased product token whose groups applied, "*" when
	// the catch-all group applied, or "" when no group applied.
	Agent string
	// Fallback is true when none of the crawler's product tokens had a group
	// and the "*" group was used (RFC 9309 2.2.1).
	Fallback bool
	// Groups are the indexes into Robots.Groups of the groups that applied
	// (merged). The slice is shared: do not modify it.
	Groups []int
	// Implicit is true when the path is /robots.txt, which is always
	// allowed (RFC 9309 2.2.2).
	Implicit bool
}

// HasGroup reports whether any group names the product token
// (case-insensitively). "*" asks for the catch-all group.
func (r *Robots) HasGroup(token string) bool {
	return r.lookup(token) != nil
}

// Test decides whether a crawler identified by the given product tokens may
// fetch path (RFC 9309 2.2). path is the URI's path and query, such as
// "/a/b?c=d"; it is normalised with NormalizePath first. The groups of every
// token that has one apply, merged (2.2.1); if no token has a group, the "*"
// group applies; if there is none either, the path is allowed.
//
// Test does not allocate when path is already normalised.
func (r *Robots) Test(path string, tokens ...string) Verdict {
	return r.TestNormalized(NormalizePath(path), tokens...)
}

// TestNormalized is Test for a path already normalised with NormalizePath.
func (r *Robots) TestNormalized(path string, tokens ...string) Verdict {
	if IsRobotsTxt(path) {
		return Verdict{Allowed: true, Implicit: true}
	}
	var best *Rule
	var v Verdict
	for _, t := range tokens {
		rs := r.lookup(t)
		if rs == nil || t == "*" {
			continue
		}
		if v.Agent == "" {
			v.Agent, v.Groups = rs.agent, rs.groups
		}
		if m := rs.first(path); better(m, best) {
			best, v.Agent, v.Groups = m, rs.agent, rs.groups
		}
	}
	if v.Agent == "" {
		if rs := r.byAgent["*"]; rs != nil {
			v.Agent, v.Groups, v.Fallback = "*", rs.groups, true
			best = rs.first(path)
		}
	}
	v.Rule = best
	v.Allowed = best == nil || best.Allow
	return v
}

// IsRobotsTxt reports whether a normalised path names /robots.txt itself,
// with or without a query: the URI RFC 9309 2.2.2 implicitly allows.
func IsRobotsTxt(path string) bool {
	rest, ok := strings.CutPrefix(path, "/robots.txt")
	return ok && (rest == "" || rest[0] == '?')
}

// better reports whether rule a beats rule b (nil loses): the longer pattern
// wins, and allow wins a tie (RFC 9309 2.2.2).
func better(a, b *Rule) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	case len(a.Pattern) != len(b.Pattern):
		return len(a.Pattern) > len(b.Pattern)
	}
	return a.Allow && !b.Allow
}

// first returns the deciding rule for path: the first match in priority
// order, or nil.
func (rs *ruleSet) first(path string) *Rule {
	for _, rule := range rs.rules {
		if rule.pat.match(path) {
			return rule
		}
	}
	return nil
}

// lookup finds the merged rules for a product token, case-insensitively,
// without allocating for tokens of up to 64 octets.
func (r *Robots) lookup(token string) *ruleSet {
	var buf [64]byte
	if len(token) > len(buf) {
		return r.byAgent[strings.ToLower(token)]
	}
	b := buf[:len(token)]
	for i := 0; i < len(token); i++ {
		c := token[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return r.byAgent[string(b)]
}

// sortRules orders rules so that the first match decides: longest pattern
// first, allow before disallow at equal length, then file order.
func sortRules(rules []*Rule) {
	slices.SortStableFunc(rules, func(a, b *Rule) int {
		if d := len(b.Pattern) - len(a.Pattern); d != 0 {
			return d
		}
		if a.Allow != b.Allow {
			if a.Allow {
				return -1
			}
			return 1
		}
		return 0
	})
}
