package accesslog

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
	"robots_until", "robots_source", "window_start", "window_basis", "versions_considered", "versions_disallowing", "class", "catalogue",
	"ranges_source", "ranges_creation_time", "ranges_prefixes", "warnings"}

// rangesCells are the csv cells that state a token's ranges: their
// sources, creationTimes and prefix count (each source's, joined with
// " "), and the token's warnings.
func rangesCells(tr *TokenRanges, warnings string) []string {
	if tr == nil {
		return []string{"", "", "", warnings}
	}
	var srcs, created []string
	for _, s := range tr.Sources {
		srcs = append(srcs, s.Source)
		created = append(created, dateOr(s.CreationTime, "-"))
	}
	return []string{strings.Join(srcs, " "), strings.Join(created, " "), strconv.Itoa(tr.Prefixes), warnings}
}

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
		cw.Write([]string{"product_token", "requests", "verified", "unverified", "impostor", "robots_fetches", "violations", "disputable", "class", "catalogue",
			"ranges_source", "ranges_creation_time", "ranges_prefixes", "warnings"})
		ranges, warns := rangesOf(r), warningsOf(r)
		for _, c := range append(slices.Clip(r.Crawlers), r.OtherClients...) {
			t := strings.ToLower(c.Token)
			cw.Write(append([]string{csvcell.Safe(c.Token), i64(c.Requests), i64(c.Verified), i64(c.Unverified), i64(c.Impostor), i64(c.RobotsFetches),
				i64(c.Violations), i64(c.Disputable), classOf(c.Class), r.Summary.Catalogue}, rangesCells(ranges[t], csvcell.Safe(warns[t]))...))
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
	ranges, warns := rangesOf(r), warningsOf(r)
	for _, k := range Kinds() {
		err := r.Each(k, func(f *Finding) error {
			t := strings.ToLower(f.ProductToken)
			return cw.Write(append(csvRow(k, f), append([]string{classOf(f.Class), r.Summary.Catalogue}, rangesCells(ranges[t], csvcell.Safe(warns[t]))...)...))
		})
		if err != nil {
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
		if err := jsonArray(w, names[k], func(fn func([]byte) error) error { return r.eachJSON(k, fn) }); err != nil {
			return err
		}
	}
	if err := jsonArray(w, "skipped_lines", r.eachSkippedJSON); err != nil {
		return err
	}
	_, err = fmt.Fprint(w, "}\n")
	return err
}

// jsonArray writes ,"name":[...] with the elements each yields.
func jsonArray(w io.Writer, name string, each func(func([]byte) error) error) error {
	fmt.Fprintf(w, ",%q:[", name)
	first := true
	err := each(func(b []byte) error {
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
	_, err = fmt.Fprint(w, "]")
	return err
}
