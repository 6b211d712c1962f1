package live

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit/site"
)

// Filter selects the decisions a stream carries, on the server, so that a
// narrow filter costs the stream little. Each field is a list of values
// any of which passes (empty: every value); the fields must all pass. A
// line that is not a decision (the lost-lines marker) always passes.
type Filter struct {
	// Tokens are product tokens, compared without regard to case (RFC
	// 9309 2.2.1).
	Tokens []string
	// Hosts are sites as audit report -host reads them: an origin
	// ("https://example.com:8443"), an authority ("example.com:8443") or
	// a host name ("example.com", every scheme and port).
	Hosts []string
	// Decisions are allow, deny and none.
	Decisions []string
	// Reasons are audit line reasons ("rule", "unreachable", ...).
	Reasons []string
	// Recent is how many of the most recent decisions kept that pass to
	// send before following new ones; -1 sends every one the ring keeps.
	Recent int

	sites []site.Filter
}

// Query parameters of /live/events; each filter may repeat.
const (
	paramToken    = "token"
	paramHost     = "host"
	paramDecision = "decision"
	paramReason   = "reason"
	paramRecent   = "recent"
)

// ParseFilter reads a Filter from the query of /live/events: token, host,
// decision and reason, each repeatable, and recent (a count; absent:
// every decision kept). The error names the parameter.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{Tokens: values(q[paramToken]), Hosts: values(q[paramHost]),
		Decisions: values(q[paramDecision]), Reasons: values(q[paramReason]), Recent: -1}
	for _, h := range f.Hosts {
		sf, err := site.ParseFilter(h)
		if err != nil {
			return Filter{}, fmt.Errorf("%s: %w", paramHost, err)
		}
		f.sites = append(f.sites, sf)
	}
	for _, d := range f.Decisions {
		if d != auditlog.DecisionAllow && d != auditlog.DecisionDeny && d != auditlog.DecisionNone {
			return Filter{}, fmt.Errorf("%s: %q: want %s, %s or %s", paramDecision, d, auditlog.DecisionAllow, auditlog.DecisionDeny, auditlog.DecisionNone)
		}
	}
	if v := q.Get(paramRecent); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Filter{}, fmt.Errorf("%s: %q: want a count of decisions, 0 or more", paramRecent, v)
		}
		f.Recent = n
	}
	return f, nil
}

// values drops empty values and trims spaces.
func values(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Query is the query of /live/events that selects f (what ParseFilter
// reads back).
func (f Filter) Query() url.Values {
	q := url.Values{}
	for k, vs := range map[string][]string{paramToken: f.Tokens, paramHost: f.Hosts, paramDecision: f.Decisions, paramReason: f.Reasons} {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	if f.Recent >= 0 {
		q.Set(paramRecent, strconv.Itoa(f.Recent))
	}
	return q
}

// matcher applies a Filter to audit lines, reading only the fields it
// needs (auditlog.Project) into buffers it reuses.
type matcher struct {
	f     Filter
	all   bool // no filter: every line passes unread
	want  auditlog.Want
	line  auditlog.Line
	sites site.Memo
}

func newMatcher(f Filter) *matcher {
	return &matcher{f: f, all: len(f.Tokens)+len(f.Hosts)+len(f.Decisions)+len(f.Reasons) == 0,
		want: auditlog.Want(0).Of(auditlog.FieldToken, auditlog.FieldURL, auditlog.FieldDecision, auditlog.FieldReason)}
}

// match reports whether line passes: the cheapest fields are compared
// first, and a site is worked out only when the others pass.
func (m *matcher) match(line []byte) bool {
	if m.all {
		return true
	}
	l := &m.line
	if auditlog.Project(line, l, m.want) != nil || !l.HasDecision {
		return true // not a decision (the lost-lines marker): shown whatever the filter
	}
	f := &m.f
	switch {
	case len(f.Decisions) > 0 && !among(f.Decisions, l.Decision),
		len(f.Reasons) > 0 && !among(f.Reasons, l.Reason),
		len(f.Tokens) > 0 && !slices.ContainsFunc(f.Tokens, func(t string) bool { return bytes.EqualFold(l.Token, []byte(t)) }):
		return false
	case len(f.sites) == 0:
		return true
	}
	st := m.sites.Of(l.URL)
	return slices.ContainsFunc(f.sites, func(sf site.Filter) bool { return sf.Keep(st) })
}

// among reports whether b is one of list, without allocating.
func among(list []string, b []byte) bool {
	for _, s := range list {
		if string(b) == s {
			return true
		}
	}
	return false
}
