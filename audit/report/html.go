package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"
)

// htmlPage is the data of pageTemplate.
type htmlPage struct {
	R        *Report
	Filters  string
	Overview []chart
	Heart    []htmlTable // violations and crawlers, right after the overview
	PerToken []chart
	Tables   []htmlTable // the rest
	Cards    []card
}

type card struct {
	Label, Value, Class string
}

type htmlTable struct {
	Name, Title string
	Headers     []string
	Numeric     []bool
	Rows        [][]string
	Notes       []string
}

// renderHTML writes one self-contained page: inline CSS and SVG, no
// script, no external resource.
func renderHTML(w io.Writer, r *Report) error {
	overview, perToken, err := charts(r)
	if err != nil {
		return err
	}
	pg := htmlPage{R: r, Filters: filterText(r.Filters), Overview: overview, PerToken: perToken, Cards: cards(r)}
	ts := tables(r)
	sort.SliceStable(ts, func(i, j int) bool { return htmlRank(ts[i].name) < htmlRank(ts[j].name) })
	for _, t := range ts {
		ht := htmlTable{Name: t.name, Title: t.title, Headers: t.headers, Notes: t.notes, Numeric: make([]bool, len(t.headers))}
		for _, row := range t.rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = cellText(v)
				ht.Numeric[i] = ht.Numeric[i] || isNumber(v)
			}
			ht.Rows = append(ht.Rows, cells)
		}
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
		{"denied", fmt.Sprint(denied), "bad"},
		{"would deny (report mode)", fmt.Sprint(would), "warn"},
		{"violations (token, host, rule)", fmt.Sprint(r.Violations.Distinct), "warn"},
		{"span", span, ""},
	}
	if s.Skipped > 0 {
		cs = append(cs, card{"skipped lines", fmt.Sprint(s.Skipped), "bad"})
	}
	return cs
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
.meta { color: #616161; font-size: 13px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.card { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card .v { font-size: 20px; font-weight: bold; }
.card .l { font-size: 12px; color: #616161; }
.card.ok .v { color: #2e7d32; } .card.bad .v { color: #c62828; } .card.warn .v { color: #ef6c00; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 12px; }
.charts figure { margin: 0; background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 6px; }
svg.chart { width: 100%; height: auto; display: block; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td { max-width: 420px; overflow-wrap: anywhere; }
.note { color: #616161; font-size: 12px; margin: 4px 0; }
</style>
</head>
<body>
<h1>robotsproxy audit report</h1>
<div class="meta">generated {{.R.GeneratedAt.Format "2006-01-02 15:04:05 UTC"}}{{with .R.Summary.First}} &middot; {{.Format "2006-01-02 15:04:05"}}{{end}}{{with .R.Summary.Last}} to {{.Format "2006-01-02 15:04:05"}}{{end}}{{with .Filters}} &middot; filters: {{.}}{{end}}</div>
<div class="cards">{{range .Cards}}<div class="card {{.Class}}"><div class="v">{{.Value}}</div><div class="l">{{.Label}}</div></div>{{end}}</div>
{{if .Overview}}<h2 id="charts">Overview</h2>
<div class="charts">{{range .Overview}}<figure>{{.SVG}}</figure>
{{end}}</div>{{end}}
{{range .Heart}}{{template "table" .}}{{end}}
{{if .PerToken}}<h2 id="token-charts">Decisions over time per crawler</h2>
<div class="charts">{{range .PerToken}}<figure>{{.SVG}}</figure>
{{end}}</div>{{end}}
{{range .Tables}}{{template "table" .}}{{end}}
</body>
</html>
{{define "table"}}<h2 id="{{.Name}}">{{.Title}}</h2>
{{$t := .}}<div class="scroll"><table>
<tr>{{range $i, $h := .Headers}}<th{{if index $t.Numeric $i}} class="n"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $t.Numeric $i}} class="n"{{end}}>{{$c}}</td>{{end}}</tr>
{{else}}<tr><td colspan="{{len .Headers}}">(none)</td></tr>
{{end}}</table></div>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{end}}`
