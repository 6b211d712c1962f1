package accesslog

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/csvcell"
)

// Formats are the output formats Render writes.
func Formats() []string { return []string{"text", "json", "csv", "html"} }

// Render writes r in format: "text" (a summary, a table per crawler and
// every finding with its evidence), "json" (the Result object), "csv"
// (one table: a row per finding, with a kind column, loadable as data) or
// "html" (a page with a section per crawler). An unknown format is an
// error.
func Render(w io.Writer, r *Result, format string) error {
	switch format {
	case "text":
		return renderText(w, r)
	case "json":
		return renderJSON(w, r)
	case "csv":
		return renderCSV(w, r)
	case "html":
		return renderHTML(w, r)
	}
	return fmt.Errorf("format %q: want one of text, json, csv, html", format)
}

// csvHeader is the csv output's header row.
var csvHeader = []string{"kind", "file", "line", "time", "client", "method", "path", "status", "user_agent",
	"product_token", "identity", "rule", "rule_line", "group", "path_resolved", "robots_sha256", "robots_from",
	"robots_until", "robots_source", "window_start", "window_basis", "versions_considered", "versions_disallowing", "class", "catalogue"}

// CSVTables are the tables the csv output can write (RenderCSV):
// "findings" (the default), a row per violation, disputable request and
// impostor; "crawlers", a row per product token, crawlers then other
// clients (the class column). Every row ends with the crawler
// catalogue's version, so that a table read alone still says it.
func CSVTables() []string { return []string{"findings", "crawlers"} }

// RenderCSV writes one table of r as CSV with a header row; an unknown
// table is an error.
func RenderCSV(w io.Writer, r *Result, table string) error {
	switch table {
	case "findings", "":
		return renderCSV(w, r)
	case "crawlers":
		cw := csv.NewWriter(w)
		cw.Write([]string{"product_token", "requests", "verified", "unverified", "impostor", "robots_fetches", "violations", "disputable", "class", "catalogue"})
		for _, c := range append(slices.Clip(r.Crawlers), r.OtherClients...) {
			cw.Write([]string{csvcell.Safe(c.Token), i64(c.Requests), i64(c.Verified), i64(c.Unverified), i64(c.Impostor), i64(c.RobotsFetches),
				i64(c.Violations), i64(c.Disputable), classOf(c.Class), r.Summary.Catalogue})
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("csv table %q: want one of findings, crawlers", table)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func renderCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, k := range Kinds() {
		if err := r.Each(k, func(f *Finding) error { return cw.Write(append(csvRow(k, f), classOf(f.Class), r.Summary.Catalogue)) }); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// classOf is class, ClassCrawler for "" (a Result decoded from an older
// json output).
func classOf(class string) string {
	if class == "" {
		return ClassCrawler
	}
	return class
}

func csvRow(kind string, f *Finding) []string {
	safe := csvcell.Safe // the cells that come from the log or robots.txt (not the operator's file name)
	return []string{kind, f.File, strconv.FormatInt(f.Line, 10), stamp(&f.Time), safe(f.Client), safe(f.Method), safe(f.Path),
		strconv.Itoa(f.Status), safe(f.UserAgent), safe(f.ProductToken), f.Identity, safe(f.Rule), itoa0(f.RuleLine), safe(f.Group),
		safe(f.PathResolved), f.RobotsSHA256, stamp(f.RobotsFrom), stamp(f.RobotsUntil), f.RobotsSource,
		stamp(f.WindowStart), f.WindowBasis, itoa0(f.VersionsConsidered), itoa0(f.VersionsDisallowing)}
}

func itoa0(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// stamp writes an RFC 3339 time, "" for nil.
func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func renderText(w io.Writer, r *Result) error {
	s := &r.Summary
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "access log audit\n")
	for _, in := range s.Inputs {
		fmt.Fprintf(tw, "log\t%s\t%d lines, sha256 %s\n", in.File, in.Lines, in.SHA256)
	}
	fmt.Fprintf(tw, "lines\t%d\t(skipped: %d malformed, %d too long, %d invalid UTF-8)\n", s.Lines, s.Skipped.Malformed, s.Skipped.TooLong, s.Skipped.InvalidUTF8)
	fmt.Fprintf(tw, "requests\t%d\t(%d from browsers and %d naming no product, never judged; %d from other clients; %d before the first robots.txt version)\n",
		s.Requests, s.Browsers, s.Unnamed, s.OtherClients, s.Unjudged)
	fmt.Fprintf(tw, "crawler catalogue\t%s\n", s.Catalogue)
	fmt.Fprintf(tw, "period\t%s .. %s\n", stamp(s.First), stamp(s.Last))
	fmt.Fprintf(tw, "robots.txt versions\t%d\n", s.Versions)
	fmt.Fprintf(tw, "violations\t%d\n", r.Count(KindViolation))
	fmt.Fprintf(tw, "disputable\t%d\n", r.Count(KindDisputable))
	fmt.Fprintf(tw, "impostors\t%d\n\n", r.Count(KindImpostor))
	textTable(tw, "crawler", r.Crawlers)
	if len(r.OtherClients) > 0 {
		fmt.Fprintln(tw)
		textTable(tw, "other client", r.OtherClients)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	titles := map[string]string{KindViolation: "violations", KindDisputable: "disputable requests", KindImpostor: "impostors"}
	for _, k := range Kinds() {
		if r.Count(k) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", titles[k])
		err := r.Each(k, func(f *Finding) error {
			_, err := fmt.Fprintln(w, textFinding(f))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// textTable writes a table of crawlers headed by what they are.
func textTable(tw io.Writer, what string, cs []*Crawler) {
	fmt.Fprintf(tw, "%s\trequests\tverified\tunverified\timpostor\trobots.txt fetches\tviolations\tdisputable\n", what)
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Token, c.Requests, c.Verified, c.Unverified, c.Impostor, c.RobotsFetches, c.Violations, c.Disputable)
	}
}

// textFinding is one finding on one line, its evidence included.
func textFinding(f *Finding) string {
	s := fmt.Sprintf("%s:%d %s %s %s %q %s %s", f.File, f.Line, stamp(&f.Time), f.Client, f.ProductToken, f.UserAgent, f.Method, f.Path)
	if f.Class == ClassOther {
		s += " class=other"
	}
	if f.Identity != "" {
		s += " identity=" + f.Identity
	}
	if f.RobotsSHA256 != "" {
		s += fmt.Sprintf(" rule=%q line=%d robots_sha256=%s %s (%d of %d versions disallow; window from %s %s)",
			f.Rule, f.RuleLine, f.RobotsSHA256, validity(f), f.VersionsDisallowing, f.VersionsConsidered,
			f.WindowBasis, stamp(f.WindowStart))
	}
	return s
}

// validity says when the deciding version was in force.
func validity(f *Finding) string {
	switch {
	case f.RobotsFrom == nil:
		return "in force throughout"
	case f.RobotsUntil == nil:
		return "in force from " + stamp(f.RobotsFrom)
	}
	return "in force from " + stamp(f.RobotsFrom) + " to " + stamp(f.RobotsUntil)
}

// renderJSON writes the Result object, its findings streamed from disk.
func renderJSON(w io.Writer, r *Result) error {
	head, err := json.Marshal(struct {
		Summary      Summary    `json:"summary"`
		Crawlers     []*Crawler `json:"crawlers"`
		OtherClients []*Crawler `json:"other_clients"`
	}{r.Summary, r.Crawlers, r.OtherClients})
	if err != nil {
		return err
	}
	if _, err := w.Write(head[:len(head)-1]); err != nil {
		return err
	}
	names := map[string]string{KindViolation: "violations", KindDisputable: "disputable", KindImpostor: "impostors"}
	for _, k := range Kinds() {
		fmt.Fprintf(w, ",%q:[", names[k])
		first := true
		err := r.eachJSON(k, func(b []byte) error {
			if !first {
				if _, err := w.Write([]byte{','}); err != nil {
					return err
				}
			}
			first = false
			_, err := w.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprint(w, "]")
	}
	_, err = fmt.Fprint(w, "}\n")
	return err
}
