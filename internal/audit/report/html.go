package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"
	"unicode/utf8"
)

// htmlPage is the data of pageTemplate.
type htmlPage struct {
	R         *Report
	Filters   string
	Integrity htmlIntegrity
	Overview  []chart
	Heart     []htmlTable // violations and crawlers, right after the overview
	PerToken  []chart
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
	tmpl, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("html template: %w", err)
	}
	return tmpl.Execute(w, pg)
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

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>robotsproxy audit report</title>
<style>
body { font-family: 'Liberation Sans', Arial, Helvetica, sans-serif; margin: 24px; color: #212121; background: #fafafa; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta, .about { color: #616161; font-size: 13px; }
.about { margin: 0 0 8px; max-width: 60em; }
nav { font-size: 13px; margin: 8px 0; line-height: 1.8; }
nav a { margin-right: 10px; color: #1565c0; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.card { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card .v { font-size: 20px; font-weight: bold; }
.card .l { font-size: 12px; color: #616161; }
.card.ok .v { color: #2e7d32; } .card.bad .v { color: #c62828; } .card.warn .v { color: #ef6c00; }
#integrity { background: #fff; border: 2px solid #9e9e9e; border-radius: 6px; padding: 8px 14px; margin: 16px 0; }
#integrity.ok { border-color: #2e7d32; } #integrity.bad { border-color: #c62828; } #integrity.unknown { border-color: #ef6c00; }
#integrity h2 { margin: 0 0 6px; border: 0; padding: 0; }
#integrity .verdict { font-size: 16px; font-weight: bold; margin: 0 0 6px; }
#integrity.ok .verdict { color: #2e7d32; } #integrity.bad .verdict { color: #c62828; } #integrity.unknown .verdict { color: #ef6c00; }
#integrity dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; font-size: 13px; }
#integrity dt { color: #616161; } #integrity dd { margin: 0; overflow-wrap: anywhere; font-family: 'Liberation Mono', monospace; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(520px, 100%), 1fr)); gap: 12px; }
.charts figure { margin: 0; background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 6px; }
figcaption { font-size: 13px; font-weight: bold; margin: 2px 4px 4px; }
.legend { font-size: 12px; margin: 4px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
svg.chart { width: 100%; height: auto; display: block; }
.charts figure { overflow-x: auto; }
@media (max-width: 600px) { svg.chart { min-width: 460px; } }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td { white-space: nowrap; }
td.long { white-space: normal; overflow-wrap: anywhere; min-width: 16em; max-width: 420px; }
.note { color: #616161; font-size: 12px; margin: 4px 0; }
.finding { font-size: 14px; margin: 4px 0; }
dl.glossary dt { font-weight: bold; margin-top: 6px; font-size: 14px; }
dl.glossary dd { margin: 2px 0 0 16px; font-size: 13px; max-width: 60em; }
@media (max-width: 600px) { body { margin: 10px; } .card { min-width: 80px; padding: 6px 10px; } }
</style>
</head>
<body>
<h1>robotsproxy audit report</h1>
<div class="meta">generated {{.R.GeneratedAt.Format "2006-01-02 15:04:05 UTC"}}{{with .R.Summary.First}} &middot; requests from {{.Format "2006-01-02 15:04:05"}}{{end}}{{with .R.Summary.Last}} to {{.Format "2006-01-02 15:04:05"}} UTC{{end}}{{with .Filters}} &middot; filters: {{.}}{{end}}</div>
<section id="integrity" class="{{.Integrity.Class}}"><h2>Integrity of the logs</h2>
<p class="verdict">Hash chain: {{.Integrity.Verdict}}</p>
<dl>{{range .Integrity.Rows}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl></section>
<div class="cards">{{range .Cards}}<div class="card {{.Class}}"><div class="v">{{.Value}}</div><div class="l">{{.Label}}</div></div>{{end}}</div>
<nav>{{if .Overview}}<a href="#charts">Overview</a>{{end}}{{range .Heart}}<a href="#{{.Name}}">{{.Title}}</a>{{end}}{{if .PerToken}}<a href="#token-charts">Per crawler</a>{{end}}{{range .Tables}}<a href="#{{.Name}}">{{.Title}}</a>{{end}}<a href="#glossary">Words used</a></nav>
{{if .Overview}}<section id="charts"><h2>Overview</h2>
<div class="charts">{{range .Overview}}{{template "chart" .}}{{end}}</div></section>{{end}}
{{range .Heart}}{{template "table" .}}{{end}}
{{if .PerToken}}<section id="token-charts"><h2>Decisions over time per crawler</h2>
<div class="charts">{{range .PerToken}}{{template "chart" .}}{{end}}</div></section>{{end}}
{{range .Tables}}{{template "table" .}}{{end}}
<section id="glossary"><h2>Words used in this report</h2>
<dl class="glossary">{{range .Glossary}}<dt>{{.Word}}</dt><dd>{{.Meaning}}</dd>{{end}}</dl></section>
</body>
</html>
{{define "chart"}}<figure><figcaption>{{.Title}}</figcaption>{{.SVG}}
{{if .Legend}}<div class="legend">{{range .Legend}}<span><i style="background: {{.Color}}"></i>{{.Name}}</span>{{end}}</div>{{end}}</figure>
{{end}}
{{define "table"}}<section id="{{.Name}}"><h2>{{.Title}}</h2>
{{with .About}}<p class="about">{{.}}</p>{{end}}
{{if .Rows}}{{$t := .}}<div class="scroll"><table>
<tr>{{range $i, $h := .Headers}}<th{{if index $t.Numeric $i}} class="n"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}{{else}}<p class="finding">{{.Empty}}</p>{{end}}</section>
{{end}}`
