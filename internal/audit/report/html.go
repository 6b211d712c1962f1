package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/internal/chart"
)

// pageHTML is the page's template: htmlPage's layout and style.
//
//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"chartCSS": func() template.CSS { return chart.CSS },
}).Parse(pageHTML))

// htmlPage is the data of pageTemplate.
type htmlPage struct {
	R         *Report
	Filters   string
	Integrity htmlIntegrity
	Overview  []chart.Figure
	Heart     []htmlTable // violations and crawlers, right after the overview
	PerToken  []chart.Figure
	Tables    []htmlTable // the rest
	Cards     []card
	Glossary  []term
}

type card struct {
	Label, Value, Class string
}

// htmlIntegrity is the integrity block: a verdict, its class (ok, bad,
// unknown) and the rest of the integrity table.
type htmlIntegrity struct {
	Verdict, Class string
	Rows           [][]string
}

type htmlTable struct {
	Name, Title, About, Empty string
	Headers                   []string
	Numeric                   []bool
	Rows                      [][]htmlCell
	Notes                     []string
}

// htmlCell is a table cell: its text, and "n" (a number, right-aligned),
// "long" (text that may wrap) or "" (kept on one line).
type htmlCell struct{ Text, Class string }

// longCell is the length past which a text cell may wrap.
const longCell = 40

// renderHTML writes one self-contained page: inline CSS and SVG, no
// script, no external resource. Sections with nothing to show are left
// out (see table.shown).
func renderHTML(w io.Writer, r *Report) error {
	overview, perToken, err := charts(r)
	if err != nil {
		return err
	}
	pg := htmlPage{R: r, Filters: filterText(r.Filters), Overview: overview, PerToken: perToken, Cards: cards(r), Glossary: glossary}
	ts := tables(r)
	sort.SliceStable(ts, func(i, j int) bool { return htmlRank(ts[i].name) < htmlRank(ts[j].name) })
	for _, t := range ts {
		if t.name == "integrity" {
			pg.Integrity = integrityBlock(r.Integrity, t)
			continue
		}
		if !t.shown() {
			continue
		}
		ht := htmlTableOf(t)
		if htmlRank(t.name) < 2 {
			pg.Heart = append(pg.Heart, ht)
		} else {
			pg.Tables = append(pg.Tables, ht)
		}
	}
	return pageTemplate.Execute(w, pg)
}

func htmlTableOf(t table) htmlTable {
	view := t.viewCols()
	ht := htmlTable{Name: t.name, Title: t.title, About: t.about, Notes: t.notes, Numeric: make([]bool, len(view))}
	if len(t.rows) == 0 {
		ht.Empty = t.empty
	}
	for _, i := range view {
		ht.Headers = append(ht.Headers, t.cols[i].label)
	}
	for _, row := range t.rows {
		for j, i := range view {
			ht.Numeric[j] = ht.Numeric[j] || isNumber(row[i])
		}
	}
	for _, row := range t.rows {
		cells := make([]htmlCell, len(view))
		for j, i := range view {
			c := htmlCell{Text: cellText(row[i])}
			switch {
			case ht.Numeric[j]:
				c.Class = "n"
			case utf8.RuneCountInString(c.Text) > longCell:
				c.Class = "long"
			}
			cells[j] = c
		}
		ht.Rows = append(ht.Rows, cells)
	}
	return ht
}

func integrityBlock(in Integrity, t table) htmlIntegrity {
	b := htmlIntegrity{Verdict: chainVerdict(in), Class: "unknown"}
	switch in.Status {
	case IntegrityVerified:
		b.Class = "ok"
	case IntegrityFailed:
		b.Class = "bad"
	}
	for _, row := range t.rows[1:] { // the first is the verdict
		b.Rows = append(b.Rows, []string{cellText(row[0]), cellText(row[1])})
	}
	return b
}

// htmlRank orders the page's tables: violations, crawlers, then the
// bounded sections, then the summary tables.
func htmlRank(name string) int {
	for i, n := range []string{"violations", "tokens", "hosts", "rules", "denied_urls"} {
		if n == name {
			return i
		}
	}
	return 5
}

func cards(r *Report) []card {
	s := r.Summary
	var denied, would, allowed uint64
	for _, d := range s.Decisions {
		switch d.Key {
		case "deny":
			denied, would = d.Enforced, d.ReportOnly
		case "allow":
			allowed = d.Total
		}
	}
	span := "-"
	if s.First != nil {
		span = (time.Duration(s.DurationSeconds) * time.Second).String()
	}
	cs := []card{
		{"requests", fmt.Sprint(s.Requests), ""},
		{"allowed", fmt.Sprint(allowed), "ok"},
		{"refused", fmt.Sprint(denied), "bad"},
	}
	if usedReportMode(s) {
		cs = append(cs, card{labelWouldDeny, fmt.Sprint(would), "warn"},
			card{"violations (crawler, site, rule)", fmt.Sprint(r.Violations.Distinct), "warn"})
	}
	cs = append(cs, card{"span", span, ""})
	if s.Skipped > 0 {
		cs = append(cs, card{"skipped lines", fmt.Sprint(s.Skipped), "bad"})
	}
	return cs
}

// term is one glossary entry.
type term struct{ Word, Meaning string }

// glossary explains the report's words, in the page.
var glossary = []term{
	{"crawler (product token)", "The name a crawler goes by in robots.txt (RFC 9309 2.2.1), such as GPTBot: taken from its User-Agent, or pinned to it by the proxy's configuration (\"identified by\")."},
	{"allowed", "robots.txt allowed the request, and the proxy forwarded it."},
	{labelRefusedRule, "A robots.txt rule disallowed the request, and the proxy answered 403 without contacting the site."},
	{labelWouldDeny, "In report mode the proxy forwards every request and only records what it would have refused: these requests went through although robots.txt disallowed them. Each is a violation."},
	{labelUnreachable, "The site's robots.txt could not be fetched (a 5xx answer or a network error), so the site is treated as fully disallowed (RFC 9309 2.3.1.4)."},
	{labelOther, "Refused by the proxy's own policy: a host list, a CONNECT rule, a failed proxy login, politeness, payment or a license."},
	{labelNotDecided, "A request the proxy does not proxy (reason not-proxied, such as a request for the proxy's own pages): robots.txt was not consulted."},
	{"robots.txt fetched / unavailable / unreachable", "The state of the site's robots.txt when each request was decided: fetched (successful, its rules apply), unavailable (4xx: no rules, everything allowed), unreachable (everything disallowed)."},
	{"unreachable periods", "Runs of requests during which the site's robots.txt stayed unreachable; \"unreachable for\" sums the time from the first to the last request of each run."},
	{"robots.txt version", "The first digits of the SHA-256 of the robots.txt body that decided: \"robotsproxy audit show\" prints the archived body."},
	{"site", "A scheme, host and port, such as https://example.com or http://127.0.0.1:8001: each has its own robots.txt."},
	{"hash chain", "Each audit line carries the SHA-256 of the line before it: deleting, inserting, editing or moving a line breaks the chain. The head (the last line's hash) kept elsewhere, or checkpoints, also show that no line was removed from the end."},
	{"overcount up to", "Shown only when a table had more rows than it keeps: a row that entered late may count up to this many requests too many."},
}
