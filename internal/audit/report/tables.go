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
	name  string // the csv section and file name, and the html anchor
	title string
	about string // what the table shows, in plain words (text and html)
	whole bool   // text: never cut cells
	cols  []column
	rows  [][]any
	notes []string
	// empty is said in place of the table in text and html when it has
	// no rows; "" leaves the section out of them.
	empty string
	// off: the feature the table reports on was not used, and text and
	// html leave the section out (csv still writes it, with its header).
	off bool
}

// column is a table column: key is its csv header (the JSON field name
// where there is one), label what text and html call it.
type column struct {
	key, label string
	show       show
}

type show int

const (
	everywhere show = iota
	dataOnly        // csv only
	viewOnly        // text and html only
	// sparse: csv always, text and html only when a cell is not zero
	// (the Space-Saving overcount, which is 0 unless a bound was hit).
	sparse
)

// col builds a column shown everywhere.
func col(key, label string) column { return column{key: key, label: label} }

// errCol is the Space-Saving overcount column of a bounded table.
var errCol = column{key: "error", label: "overcount up to", show: sparse}

// viewCols are the indices of the columns text and html show.
func (t *table) viewCols() []int {
	var out []int
	for i, c := range t.cols {
		switch c.show {
		case dataOnly:
			continue
		case sparse:
			if !t.anyNonZero(i) {
				continue
			}
		}
		out = append(out, i)
	}
	return out
}

// dataCols are the indices of the columns csv writes.
func (t *table) dataCols() []int {
	var out []int
	for i, c := range t.cols {
		if c.show != viewOnly {
			out = append(out, i)
		}
	}
	return out
}

func (t *table) anyNonZero(i int) bool {
	for _, r := range t.rows {
		if n, ok := r[i].(uint64); !ok || n != 0 {
			return true
		}
	}
	return false
}

// shown reports whether text and html show the section at all.
func (t *table) shown() bool { return !t.off && (len(t.rows) > 0 || t.empty != "") }

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

// TableNames are the tables of a report, in the order every format
// writes them: the names "-format csv -o DIR" gives its files (NAME.csv)
// and "-table NAME" takes.
func TableNames() []string {
	var names []string
	for _, t := range tables(&Report{}) {
		names = append(names, t.name)
	}
	return names
}

func tables(r *Report) []table {
	ts := []table{summaryTable(r), integrityTable(r.Integrity)}
	reportMode := usedReportMode(r.Summary)
	for _, c := range []struct {
		name, title, what, about string
		counts                   []Count
	}{
		{"decisions", "Decisions", "decision", "", r.Summary.Decisions},
		{"reasons", "Reasons", "reason", "Why each request was allowed or refused, as the audit line records it.", r.Summary.Reasons},
		{"access_results", "robots.txt access", "access result", "Whether the site's robots.txt could be fetched when each request was decided (RFC 9309 2.3.1).", r.Summary.AccessResults},
		{"token_sources", "How crawlers were identified", "identified by", "Where each request's product token came from.", r.Summary.TokenSources},
	} {
		t := countTable(c.name, c.title, c.what, c.counts, reportMode)
		t.about = c.about
		ts = append(ts, t)
	}
	ts = append(ts, tokenTable(r.Tokens), violationTable(r.Violations, reportMode), hostTable(r.Hosts),
		ruleTable(r.Rules), urlTable(r.DeniedURLs))
	ts = append(ts, spendTables(r.Spend)...)
	ts = append(ts, inputTable(r.Inputs), problemTable(r))
	return ts
}

// usedReportMode reports whether any request was decided in report mode
// (enforced false): else every refusal was enforced.
func usedReportMode(s Summary) bool {
	for _, d := range s.Decisions {
		if d.ReportOnly > 0 {
			return true
		}
	}
	return false
}

func summaryTable(r *Report) table {
	s := r.Summary
	t := table{name: "summary", title: "Summary", cols: []column{col("item", "item"), col("value", "value")}, whole: true}
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
	add("distinct sites", approx(s.DistinctHosts, s.DistinctHostsExact))
	add("lines with a field cut", s.FieldsCut)
	add("logs", uint64(len(r.Inputs)))
	return t
}

// estimate is a count that may be a HyperLogLog estimate: text and html
// write it with a leading "~" when it is, csv as the bare number (the
// table's NAME_exact column says which).
type estimate struct {
	n     uint64
	exact bool
}

func approx(n uint64, exact bool) estimate { return estimate{n, exact} }

func (e estimate) String() string {
	if e.exact {
		return fmt.Sprint(e.n)
	}
	return fmt.Sprintf("~%d", e.n)
}

func countTable(name, title, what string, cs []Count, reportMode bool) table {
	ro := column{key: "report_only", label: "report mode only", show: sparse}
	if reportMode {
		ro.show = everywhere
	}
	t := table{name: name, title: title, cols: []column{col("key", what), col("total", "requests"), col("enforced", "enforced"), ro}}
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
		notes = append(notes, fmt.Sprintf("bound hit: the top %d %s were tracked (Space-Saving, %s); a row's count may be too high by at most its \"overcount up to\"", s.Tracked, what, bound))
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

// Labels shared by the tables and the glossary.
const (
	labelRefusedRule = "refused by a robots.txt rule"
	labelWouldDeny   = "would be refused (report mode)"
	labelUnreachable = "refused: robots.txt unreachable"
	labelOther       = "refused for another reason"
	labelNotDecided  = "not decided"
)

func tokenTable(s Section[TokenRow]) table {
	t := table{name: "tokens", title: "Crawlers (product tokens)", notes: sectionNotes(s, "crawlers"), empty: "No requests.",
		cols: []column{col("token", "crawler"), col("requests", "requests"), col("allowed", "allowed"),
			col("denied_by_rule", labelRefusedRule), col("would_deny", labelWouldDeny), col("denied_unreachable", labelUnreachable),
			col("other_refusals", labelOther), col("not_decided", labelNotDecided), col("distinct_hosts", "sites"),
			{key: "distinct_hosts_exact", show: dataOnly}, col("source", "identified by"), errCol}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Token, r.Requests, r.Allowed, r.DeniedByRule, r.WouldDeny,
			r.DeniedUnreachable, r.OtherRefusals, r.NotDecided, approx(r.DistinctHosts, r.DistinctHostsExact),
			r.DistinctHostsExact, r.Source, r.Error})
	}
	return t
}

func violationTable(s Section[ViolationRow], reportMode bool) table {
	t := table{name: "violations", title: "Violations (report mode: forwarded although robots.txt refused them)", notes: sectionNotes(s, "violations"),
		about: "Requests the proxy let through in report mode although robots.txt disallowed them, by crawler, site, rule and robots.txt version.",
		empty: "None: no request was forwarded against robots.txt.",
		cols: []column{col("token", "crawler"), {key: "host", show: dataOnly}, {label: "site", show: viewOnly},
			col("robots_url", "robots.txt"), col("rule", "rule"), col("rule_line", "rule line"), col("robots_sha256", "robots.txt version"),
			col("reason", "why refused"), col("count", "requests"), col("first_seen", "first"), col("last_seen", "last"), errCol,
			{key: "origin", show: dataOnly}}}
	if !reportMode {
		t.empty = "None: report mode was off, so every refusal was enforced and no request was forwarded against robots.txt."
	}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Token, r.Host, r.Origin, r.RobotsURL, r.Rule, ruleLine(r.Rule, r.RuleLine), sha(r.RobotsSHA256),
			r.Reason, r.Count, r.FirstSeen, r.LastSeen, r.Error, r.Origin})
	}
	return t
}

func hostTable(s Section[HostRow]) table {
	t := table{name: "hosts", title: "Sites", notes: sectionNotes(s, "sites"),
		about: "One row per site: scheme, host and port, which is what a robots.txt applies to.",
		cols: []column{col("origin", "site"), {key: "authority", show: dataOnly}, {key: "host", show: dataOnly},
			col("requests", "requests"), col("denied", "refused"), col("would_deny", labelWouldDeny),
			col("successful", "robots.txt fetched"), col("unavailable", "robots.txt unavailable"), col("unreachable", "robots.txt unreachable"),
			col("unreachable_spells", "unreachable periods"), col("unreachable_seconds", "unreachable for"),
			col("unreachable_at_end", "still unreachable at the end"), col("robots_versions", "robots.txt versions"),
			col("last_robots_sha256", "last robots.txt version"), errCol}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Origin, r.Authority, r.Host, r.Requests, r.Denied, r.WouldDeny, r.Successful, r.Unavailable,
			r.Unreachable, r.UnreachableSpells, seconds(r.UnreachableSeconds), yesNo(r.UnreachableAtEnd), r.RobotsVersions, sha(r.LastRobotsSHA256), r.Error})
	}
	return t
}

// yesNo is a flag: "yes" or "no" in text and html, "true" or "false" (as
// in JSON) in csv.
type yesNo bool

func (y yesNo) String() string {
	if y {
		return "yes"
	}
	return "no"
}

func ruleTable(s Section[RuleRow]) table {
	t := table{name: "rules", title: "robots.txt rules that decided the most requests", notes: sectionNotes(s, "rules"),
		cols: []column{col("robots_url", "robots.txt"), col("rule", "rule"), col("rule_line", "rule line"), col("requests", "requests"),
			col("allowed", "allowed"), col("denied", "refused"), col("would_deny", labelWouldDeny), errCol}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.RobotsURL, r.Rule, ruleLine(r.Rule, r.RuleLine), r.Requests, r.Allowed, r.Denied, r.WouldDeny, r.Error})
	}
	return t
}

func urlTable(s Section[URLRow]) table {
	t := table{name: "denied_urls", title: "URLs refused the most", notes: sectionNotes(s, "URLs"),
		cols: []column{col("url", "url"), col("denials", "refusals"), col("denied", "refused"), col("would_deny", labelWouldDeny), errCol}}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.URL, r.Denials, r.Denied, r.WouldDeny, r.Error})
	}
	return t
}

func inputTable(in []Input) table {
	t := table{name: "inputs", title: "Logs read (oldest first)", whole: true,
		cols: []column{col("name", "log"), col("gzip", "gzip"), col("lines", "lines"), col("skipped", "skipped")}}
	for _, i := range in {
		t.rows = append(t.rows, []any{i.Name, yesNo(i.Gzip), i.Lines, i.Skipped})
	}
	return t
}

// problemTable lists why lines were skipped and which logs were not read
// to their end.
func problemTable(r *Report) table {
	s := r.Summary
	t := table{name: "skipped", title: "Skipped input", whole: true, cols: []column{col("what", "what"), col("where", "where"), col("count", "lines")}}
	for _, why := range sortedKeys(s.SkippedBy) {
		t.rows = append(t.rows, []any{why, "", s.SkippedBy[why]})
	}
	for _, e := range s.InputErrors {
		t.rows = append(t.rows, []any{e.Error, location(e.File, e.Line), uint64(1)})
	}
	if s.MoreInputErrors > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d more input errors not shown", s.MoreInputErrors))
	}
	return t
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
	case estimate:
		return v.String()
	case yesNo:
		return v.String()
	case string:
		return v
	}
	return fmt.Sprint(v)
}

func isNumber(v any) bool {
	switch v.(type) {
	case uint64, int64, int, seconds, estimate:
		return true
	}
	return false
}
