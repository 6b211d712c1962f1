package report

import (
	"fmt"
	"sort"
	"time"
)

// table is one section as rows of cells, for the text, csv and html
// renderers. A cell is a string, a uint64 or int64 count, a time.Time, or
// a seconds value (a duration).
type table struct {
	name    string // the csv section column and html anchor
	title   string
	whole   bool // text: never cut cells
	headers []string
	rows    [][]any
	notes   []string
}

type seconds int64

// sha is a robots.txt digest: cut to its first 12 digits in text and html.
type sha string

// ruleLine is a rule's line number, blank when there is no rule.
func ruleLine(rule string, line int64) any {
	if rule == "" && line == 0 {
		return ""
	}
	return line
}

func tables(r *Report) []table {
	ts := []table{summaryTable(r)}
	for _, c := range []struct {
		name, title string
		counts      []Count
	}{
		{"decisions", "Decisions", r.Summary.Decisions},
		{"reasons", "Reasons", r.Summary.Reasons},
		{"access_results", "Access results", r.Summary.AccessResults},
		{"token_sources", "Token sources", r.Summary.TokenSources},
	} {
		ts = append(ts, countTable(c.name, c.title, c.counts))
	}
	ts = append(ts, tokenTable(r.Tokens), violationTable(r.Violations), hostTable(r.Hosts),
		ruleTable(r.Rules), urlTable(r.DeniedURLs))
	ts = append(ts, spendTables(r.Spend)...)
	ts = append(ts, inputTable(r.Inputs))
	if t, ok := problemTable(r); ok {
		ts = append(ts, t)
	}
	return ts
}

func summaryTable(r *Report) table {
	s := r.Summary
	t := table{name: "summary", title: "Summary", headers: []string{"item", "value"}, whole: true}
	add := func(k string, v any) { t.rows = append(t.rows, []any{k, cellText(v)}) }
	if s.First != nil {
		add("first", *s.First)
		add("last", *s.Last)
		add("span", seconds(s.DurationSeconds))
	}
	add("lines read", s.Lines)
	add("requests", s.Requests)
	if s.Filtered > 0 {
		add("left out by filters", s.Filtered)
	}
	skipped := "0 lines"
	if s.Skipped > 0 {
		skipped = fmt.Sprintf("%d lines, first at %s", s.Skipped, s.FirstSkipped)
	}
	add("skipped", skipped)
	if n := len(s.InputErrors) + s.MoreInputErrors; n > 0 {
		add("logs not read to the end", uint64(n))
	}
	add("distinct hosts", approx(s.DistinctHosts, s.DistinctHostsExact))
	add("lines with a field cut", s.FieldsCut)
	add("logs", uint64(len(r.Inputs)))
	return t
}

// approx renders an estimated count with a leading "~".
func approx(n uint64, exact bool) any {
	if exact {
		return n
	}
	return fmt.Sprintf("~%d", n)
}

func countTable(name, title string, cs []Count) table {
	t := table{name: name, title: title, headers: []string{"key", "total", "enforced", "report-only"}}
	for _, c := range cs {
		t.rows = append(t.rows, []any{c.Key, c.Total, c.Enforced, c.ReportOnly})
	}
	return t
}

// sectionNotes says how much of a bounded section is not shown and
// whether its bound was hit.
func sectionNotes[T any](s Section[T], what string) []string {
	var notes []string
	if s.MoreNotShown > 0 {
		more := fmt.Sprint(s.MoreNotShown)
		if !s.DistinctExact {
			more = "~" + more
		}
		notes = append(notes, fmt.Sprintf("%s more %s not shown", more, what))
	}
	if s.BoundHit {
		bound := fmt.Sprintf("capacity %d", s.Capacity)
		if s.ByteBoundHit {
			bound = fmt.Sprintf("as many as fit in %s", sizeText(s.ByteBudget))
		}
		notes = append(notes, fmt.Sprintf("bound hit: the top %d %s were tracked (Space-Saving, %s); a row with err > 0 may count up to err too many", s.Tracked, what, bound))
	}
	return notes
}

// sizeText writes an octet count in KiB or MiB.
func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func tokenTable(s Section[TokenRow]) table {
	t := table{name: "tokens", title: "Crawlers (product tokens)", notes: sectionNotes(s, "tokens"),
		headers: []string{"token", "requests", "allowed", "denied by rule", "would deny", "denied unreachable", "other refusals", "not decided", "hosts", "source", "err"}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Token, r.Requests, r.Allowed, r.DeniedByRule, r.WouldDeny,
			r.DeniedUnreachable, r.OtherRefusals, r.NotDecided, approx(r.DistinctHosts, r.DistinctHostsExact), r.Source, r.Error})
	}
	return t
}

func violationTable(s Section[ViolationRow]) table {
	t := table{name: "violations", title: "Violations (report mode: forwarded although denied)", notes: sectionNotes(s, "violations"),
		headers: []string{"token", "host", "robots.txt", "rule", "line", "robots sha256", "reason", "count", "first seen", "last seen", "err"}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Token, r.Host, r.RobotsURL, r.Rule, ruleLine(r.Rule, r.RuleLine), sha(r.RobotsSHA256),
			r.Reason, r.Count, r.FirstSeen, r.LastSeen, r.Error})
	}
	return t
}

func hostTable(s Section[HostRow]) table {
	t := table{name: "hosts", title: "Hosts", notes: sectionNotes(s, "hosts"),
		headers: []string{"host", "requests", "denied", "would deny", "successful", "unavailable", "unreachable", "unreachable spells", "unreachable for", "unreachable at end", "robots.txt versions", "last robots sha256", "err"}}
	for _, r := range s.Rows {
		atEnd := "no"
		if r.UnreachableAtEnd {
			atEnd = "yes"
		}
		t.rows = append(t.rows, []any{r.Host, r.Requests, r.Denied, r.WouldDeny, r.Successful, r.Unavailable,
			r.Unreachable, r.UnreachableSpells, seconds(r.UnreachableSeconds), atEnd, r.RobotsVersions, sha(r.LastRobotsSHA256), r.Error})
	}
	return t
}

func ruleTable(s Section[RuleRow]) table {
	t := table{name: "rules", title: "Top deciding rules", notes: sectionNotes(s, "rules"),
		headers: []string{"robots.txt", "rule", "line", "requests", "allowed", "denied", "would deny", "err"}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.RobotsURL, r.Rule, ruleLine(r.Rule, r.RuleLine), r.Requests, r.Allowed, r.Denied, r.WouldDeny, r.Error})
	}
	return t
}

func urlTable(s Section[URLRow]) table {
	t := table{name: "denied_urls", title: "Top denied URLs", notes: sectionNotes(s, "URLs"),
		headers: []string{"url", "denials", "denied", "would deny", "err"}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.URL, r.Denials, r.Denied, r.WouldDeny, r.Error})
	}
	return t
}

func inputTable(in []Input) table {
	t := table{name: "inputs", title: "Logs read (oldest first)", whole: true, headers: []string{"log", "gzip", "lines", "skipped"}}
	for _, i := range in {
		gz := "no"
		if i.Gzip {
			gz = "yes"
		}
		t.rows = append(t.rows, []any{i.Name, gz, i.Lines, i.Skipped})
	}
	return t
}

// problemTable lists why lines were skipped and which logs were not read
// to their end.
func problemTable(r *Report) (table, bool) {
	s := r.Summary
	t := table{name: "skipped", title: "Skipped input", whole: true, headers: []string{"what", "where", "count"}}
	for _, why := range sortedKeys(s.SkippedBy) {
		t.rows = append(t.rows, []any{why, "", s.SkippedBy[why]})
	}
	for _, e := range s.InputErrors {
		t.rows = append(t.rows, []any{e.Error, location(e.File, e.Line), uint64(1)})
	}
	if s.MoreInputErrors > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d more input errors not shown", s.MoreInputErrors))
	}
	return t, len(t.rows) > 0
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cellText formats a cell for the text and html renderers; csv keeps
// seconds as a number.
func cellText(v any) string {
	switch v := v.(type) {
	case time.Time:
		return v.Format(time.RFC3339)
	case seconds:
		return (time.Duration(v) * time.Second).String()
	case sha:
		return cut(string(v), 13)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

func isNumber(v any) bool {
	switch v.(type) {
	case uint64, int64, int, seconds:
		return true
	}
	return false
}
