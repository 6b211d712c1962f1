package accesslog

import (
	"html/template"
	"io"
	"slices"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/chart"
)

// htmlRows is the most findings of a kind shown in a crawler's section,
// and htmlTotalRows the most in the page, so that the page (and the memory
// it is built in) stays bounded; the json and csv outputs have every one.
const (
	htmlRows      = 200
	htmlTotalRows = 20000
)

// htmlSection is one crawler's section of the HTML page.
type htmlSection struct {
	*Crawler
	Violations, Disputable, Impostors []Finding
	// More counts the findings of each kind left out past htmlRows.
	More map[string]int64
}

type htmlPage struct {
	R                                 *Result
	Violations, Disputable, Impostors int64
	Sections                          []htmlSection
	// Skipped are the first skipped lines, SkippedMore says how many.
	Skipped     []SkippedLine
	SkippedMore string
}

func renderHTML(w io.Writer, r *Result) error {
	p := htmlPage{R: r, Violations: r.Count(KindViolation), Disputable: r.Count(KindDisputable), Impostors: r.Count(KindImpostor)}
	idx := map[crawlerKey]int{}
	for _, c := range append(slices.Clip(r.Crawlers), r.OtherClients...) {
		idx[crawlerKey{classOf(c.Class), c.Token}] = len(p.Sections)
		p.Sections = append(p.Sections, htmlSection{Crawler: c, More: map[string]int64{}})
	}
	if n := r.SkippedCount(); n > 0 {
		p.SkippedMore = firstOf(n)
		if err := eachFirstSkipped(r, func(s *SkippedLine) error { p.Skipped = append(p.Skipped, *s); return nil }); err != nil {
			return err
		}
	}
	shown := 0
	for _, k := range Kinds() {
		err := r.Each(k, func(f *Finding) error {
			i, ok := idx[crawlerKey{classOf(f.Class), f.ProductToken}]
			if !ok {
				i, ok = idx[crawlerKey{classOf(f.Class), OtherCrawlers}]
			}
			if !ok {
				return nil
			}
			s := &p.Sections[i]
			l := map[string]*[]Finding{KindViolation: &s.Violations, KindDisputable: &s.Disputable, KindImpostor: &s.Impostors}[k]
			if len(*l) >= htmlRows || shown >= htmlTotalRows {
				s.More[k]++
				return nil
			}
			shown++
			*l = append(*l, *f)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return htmlTmpl.Execute(w, p)
}

// Chart draws the crawler's requests per UTC day, violations and
// disputable requests apart, one bar a day from its first to its last, as
// the page is written (no section holds its chart).
func (s htmlSection) Chart() (template.HTML, error) {
	first, err := time.Parse(time.DateOnly, s.Timeline[0].Date)
	if err != nil {
		return "", err
	}
	b := chart.Bars{Title: "Requests per day: " + s.Token, Start: first, Step: 24 * time.Hour,
		ValueLabel: "requests per day", AcrossLabel: "day (UTC)", Series: []chart.Series{
			{Name: "violations", Color: "#c62828"}, {Name: "disputable", Color: "#ef6c00"}, {Name: "other requests", Color: "#2e7d32"}}}
	for _, d := range s.Timeline {
		t, err := time.Parse(time.DateOnly, d.Date)
		if err != nil {
			return "", err
		}
		i := int(t.Sub(first) / (24 * time.Hour))
		for j := range b.Series {
			b.Series[j].Values = append(b.Series[j].Values, make([]uint64, i+1-len(b.Series[j].Values))...)
		}
		b.Series[0].Values[i] = uint64(d.Violations)
		b.Series[1].Values[i] = uint64(d.Disputable)
		b.Series[2].Values[i] = uint64(max(d.Requests-d.Violations-d.Disputable, 0))
	}
	fig, err := b.Draw()
	if err != nil {
		return "", err
	}
	return fig.HTML()
}

var htmlTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"stamp":    stamp,
	"period":   period,
	"source":   sourceText,
	"date":     func(t *time.Time) string { return dateOr(t, "not stated") },
	"chartCSS": func() template.CSS { return chart.CSS },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>robots.txt compliance: access log audit</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;max-width:80em}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
td.n{text-align:right}
{{chartCSS}}
figure.chart{max-width:50em;margin:.5em 0}
code{font-size:12px;word-break:break-all}
code.rule{white-space:nowrap;word-break:normal}
dt{font-weight:bold}
ul.warn li{color:#a30}
</style></head><body>
<h1>robots.txt compliance: access log audit</h1>
{{with .R.Summary}}
<table>
{{range .Inputs}}<tr><th>log file</th><td>{{.File}}: {{.Lines}} lines, SHA-256 <code>{{.SHA256}}</code></td></tr>
{{end}}
<tr><th>lines read</th><td class="n">{{.Lines}}</td></tr>
<tr><th>lines skipped</th><td>{{.Skipped.Malformed}} malformed, {{.Skipped.TooLong}} too long, {{.Skipped.InvalidUTF8}} not UTF-8</td></tr>
<tr><th>requests</th><td class="n">{{.Requests}}</td></tr>
<tr><th>requests from browsers (never judged)</th><td class="n">{{.Browsers}}</td></tr>
<tr><th>requests naming no product (never judged)</th><td class="n">{{.Unnamed}}</td></tr>
<tr><th>requests from other clients (libraries, tools)</th><td class="n">{{.OtherClients}}</td></tr>
<tr><th>crawler catalogue</th><td><code>{{.Catalogue}}</code></td></tr>
<tr><th>browser families (ua-parser)</th><td><code>{{.BrowserFamilies}}</code></td></tr>
<tr><th>requests before the first robots.txt version</th><td class="n">{{.Unjudged}}</td></tr>
<tr><th>period</th><td>{{period .}}</td></tr>
<tr><th>robots.txt versions</th><td class="n">{{.Versions}}</td></tr>
</table>
{{if .Warnings}}<h2>Warnings</h2>
<ul class="warn">{{range .Warnings}}<li>{{.Message}}</li>{{end}}</ul>{{end}}
{{if .IPRanges}}<h2>Published IP ranges</h2>
<table><tr><th>product token</th><th>prefixes</th><th>creationTime</th><th>requests</th><th>inside</th><th>outside</th><th>near</th><th>source</th></tr>
{{range .IPRanges}}{{$t := .}}{{range $i, $s := .Sources}}<tr><td>{{$t.Token}}</td><td class="n">{{$s.Prefixes}}</td><td>{{date $s.CreationTime}}</td>{{if eq $i 0}}<td class="n">{{$t.Requests}}</td><td class="n">{{$t.Inside}}</td><td class="n">{{$t.Outside}}</td><td class="n">{{$t.Near}}</td>{{else}}<td></td><td></td><td></td><td></td>{{end}}<td><code>{{source $s}}</code></td></tr>
{{end}}{{end}}</table>{{end}}
{{end}}
{{if .Skipped}}<h2>Skipped lines</h2>
<p>{{.SkippedMore}}; the json output lists every one.</p>
<table><tr><th>line</th><th>cause</th></tr>{{range .Skipped}}<tr><td>{{.File}}:{{.Line}}</td><td>{{.Cause}}{{with .Reason}}: {{.}}{{end}}</td></tr>{{end}}</table>{{end}}
<p>{{.Violations}} violations, {{.Disputable}} disputable requests, {{.Impostors}} impostors.</p>
<h2>Crawlers</h2>
{{template "crawlers" .R.Crawlers}}
{{if .R.OtherClients}}<h2>Other clients</h2>
<p>Libraries and tools (curl, python-requests, ...): judged like crawlers, listed apart.</p>
{{template "crawlers" .R.OtherClients}}{{end}}
{{range .Sections}}
<section id="{{template "anchor" .Crawler}}">
<h2>{{.Token}}{{if eq .Class "other"}} (other client){{end}}</h2>
<p>Claimed by {{.Requests}} requests{{if or .Verified .Unverified .Impostor}}: {{.Verified}} verified, {{.Unverified}} unverified, {{.Impostor}} from addresses the crawler does not use (impostors){{end}}. {{.RobotsFetches}} fetches of /robots.txt.</p>
{{if .Timeline}}{{.Chart}}{{end}}
{{if .Violations}}<h3>Violations</h3>{{template "findings" .Violations}}{{with index .More "violation"}}<p>{{.}} more: see the json or csv output.</p>{{end}}{{end}}
{{if .Disputable}}<h3>Disputable requests</h3>{{template "findings" .Disputable}}{{with index .More "disputable"}}<p>{{.}} more: see the json or csv output.</p>{{end}}{{end}}
{{if .Impostors}}<h3>Impostors</h3>{{template "findings" .Impostors}}{{with index .More "impostor"}}<p>{{.}} more: see the json or csv output.</p>{{end}}{{end}}
{{if .TopViolated}}<h3>Paths most often violated</h3>
<table><tr><th>path</th><th>violations</th></tr>{{range .TopViolated}}<tr><td><code>{{.Path}}</code></td><td class="n">{{.Count}}</td></tr>{{end}}</table>{{end}}
{{if .Timeline}}<h3>Timeline (UTC days)</h3>
<table><tr><th>day</th><th>requests</th><th>violations</th><th>disputable</th></tr>
{{range .Timeline}}<tr><td>{{.Date}}</td><td class="n">{{.Requests}}</td><td class="n">{{.Violations}}</td><td class="n">{{.Disputable}}</td></tr>
{{end}}</table>{{end}}
</section>
{{end}}
<h2>Words used</h2>
<dl>
<dt>violation</dt><dd>a request that every robots.txt version the crawler could legitimately have been using disallows: the versions in force during the 24 hours before it (RFC 9309 2.4 lets a crawler cache robots.txt that long), or since the crawler's last fetch of /robots.txt when that is later.</dd>
<dt>disputable</dt><dd>a request that only some of those versions disallow.</dd>
<dt>browser, other client</dt><dd>a request whose User-Agent has a browser's shape (a rendering engine, a platform comment), or whose family ua-parser's data (uap-core) names, and nothing of a crawler's (the crawler catalogue does not know it, no "+http" contact, no "bot", "crawler" or "spider") comes from a browser: counted, never judged. A library or tool (curl, python-requests, ...) is another client: judged under its product token like a crawler, listed apart.</dd>
<dt>impostor</dt><dd>a request that names a crawler whose published IP ranges do not contain its address (and whose reverse DNS, when checked, does not confirm it). Its requests are not held against the crawler it names.</dd>
<dt>deciding version</dt><dd>the robots.txt version, by SHA-256 and period in force, whose rule is quoted.</dd>
</dl>
</body></html>
{{define "anchor"}}{{if eq .Class "other"}}o{{else}}c{{end}}-{{.Token}}{{end}}
{{define "crawlers"}}<table><tr><th>product token</th><th>requests</th><th>verified</th><th>unverified</th><th>impostor</th><th>robots.txt fetches</th><th>violations</th><th>disputable</th></tr>
{{range .}}<tr><td><a href="#{{template "anchor" .}}">{{.Token}}</a></td><td class="n">{{.Requests}}</td><td class="n">{{.Verified}}</td><td class="n">{{.Unverified}}</td><td class="n">{{.Impostor}}</td><td class="n">{{.RobotsFetches}}</td><td class="n">{{.Violations}}</td><td class="n">{{.Disputable}}</td></tr>
{{end}}</table>{{end}}
{{define "findings"}}<table><tr><th>line</th><th>time</th><th>client</th><th>request</th><th>User-Agent</th><th>identity</th><th>rule</th><th>robots.txt version</th></tr>
{{range .}}<tr><td>{{.File}}:{{.Line}}</td><td>{{stamp .Time}}</td><td>{{.Client}}</td><td><code>{{.Method}} {{.Path}}</code> {{.Status}}</td><td><code>{{.UserAgent}}</code></td><td>{{.Identity}}</td><td>{{if .Rule}}line {{.RuleLine}}: <code class="rule">{{.Rule}}</code>{{end}}</td><td>{{if .RobotsSHA256}}<code>{{.RobotsSHA256}}</code><br>in force {{with .RobotsFrom}}{{stamp .}}{{else}}throughout{{end}}{{with .RobotsUntil}} to {{stamp .}}{{end}}; {{.VersionsDisallowing}} of {{.VersionsConsidered}} versions disallow{{end}}</td></tr>
{{end}}</table>{{end}}`))
