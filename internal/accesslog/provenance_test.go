package accesslog

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"html"
	"path/filepath"
	"strings"
	"testing"
)

// judgeWith reads log with the ranges of specs, against the robots.txt
// file robots.
func judgeWith(t *testing.T, robots string, specs []string, log []byte) *Result {
	t.Helper()
	h, err := LoadHistory(context.Background(), robots)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{}
	if _, err := LoadRanges(context.Background(), v, specs, RangesOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{History: h, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Read(context.Background(), "apache_logs", bytes.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	return a.Result(0)
}

// The trimmed Googlebot fixture (four /27s in 66.249.79.x, of 2023) used
// on a real 2015 log whose Googlebot came from 66.249.73.x turns every
// Googlebot request (Googlebot-Image's and Googlebot-Mobile's too, checked
// against Googlebot's ranges) into an impostor: the report says where the ranges
// came from, their creationTime and prefix count, and warns twice, in
// every format: the ranges are 8 years from the log, and all of
// Googlebot's requests came from next to them.
func TestTrimmedRangesOnRealGooglebotWarn(t *testing.T) {
	fixture := rangesFixture(t, "googlebot-fixture.json")
	r := judgeWith(t, filepath.Join("..", "..", "testdata", "site", "robots.txt"), []string{"Googlebot=" + fixture}, apacheLog(t, -1))
	if len(r.Summary.IPRanges) != 1 {
		t.Fatalf("ranges %+v", r.Summary.IPRanges)
	}
	tr := r.Summary.IPRanges[0]
	if tr.Token != "Googlebot" || tr.Prefixes != 7 || tr.Requests != 542 || tr.Inside != 0 || tr.Outside != 542 || tr.Near != 539 ||
		tr.Sources[0].Source != fixture || tr.Sources[0].CreationTime.Format("2006-01-02") != "2023-09-26" {
		t.Errorf("ranges %+v", tr)
	}
	kinds := map[string]bool{}
	for _, w := range r.Summary.Warnings {
		kinds[w.Kind] = w.Token == "Googlebot"
	}
	if !kinds[WarnRangesDate] || !kinds[WarnRangesOutside] || len(r.Summary.Warnings) != 2 {
		t.Fatalf("warnings %+v", r.Summary.Warnings)
	}
	outputs := map[string]string{}
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		outputs[f] = b.String()
		if f == "html" {
			outputs[f] = html.UnescapeString(b.String())
		}
	}
	var c bytes.Buffer
	if err := RenderCSV(&c, r, "crawlers"); err != nil {
		t.Fatal(err)
	}
	outputs["csv crawlers"] = c.String()
	for f, out := range outputs {
		for _, want := range []string{fixture, "2023-09-26", "3051 days after the log's last request", "539 of them from next to a published prefix"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q", f, want)
			}
		}
	}
	if !strings.Contains(outputs["text"], "Googlebot      7         2023-09-26T22:00:50Z  542       0       542      539   "+fixture) {
		t.Errorf("text:\n%s", outputs["text"])
	}
	var js Result
	if err := json.Unmarshal([]byte(outputs["json"]), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Summary.IPRanges) != 1 || js.Summary.IPRanges[0].Sources[0].Prefixes != 7 || len(js.Summary.Warnings) != 2 || len(js.Impostors) != 542 ||
		len(js.SkippedLines) != 1 || js.SkippedLines[0].Line != 8899 {
		t.Errorf("json summary %+v, %d impostors, skipped %+v", js.Summary, len(js.Impostors), js.SkippedLines)
	}
	rows, err := csv.NewReader(strings.NewReader(outputs["csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head, first := rows[0], rows[1]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	if first[col["kind"]] != KindImpostor || first[col["ranges_source"]] != fixture || first[col["ranges_creation_time"]] != "2023-09-26T22:00:50Z" ||
		first[col["ranges_prefixes"]] != "7" || !strings.Contains(first[col["warnings"]], "trimmed or out of date") {
		t.Errorf("csv row %q", first)
	}
	for _, want := range []string{"<h2>Warnings</h2>", "<h2>Published IP ranges</h2>", "<td>apache_logs:8899</td>"} {
		if !strings.Contains(outputs["html"], want) {
			t.Errorf("html: no %q", want)
		}
	}
}

// Ranges of the log's time, holding the requests' addresses, warn of
// nothing.
func TestMatchingRangesDoNotWarn(t *testing.T) {
	log := []byte(line("2023-09-20T00:00:00Z", "66.249.79.230", "/", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"))
	r := judgeWith(t, filepath.Join("..", "..", "testdata", "site", "robots.txt"), []string{"Googlebot=" + rangesFixture(t, "googlebot-fixture.json")}, bytes.Repeat(log, 20))
	if len(r.Summary.Warnings) != 0 || r.Summary.IPRanges[0].Inside != 20 {
		t.Errorf("warnings %+v, ranges %+v", r.Summary.Warnings, r.Summary.IPRanges)
	}
}

// An empty log, and a robots.txt that is not text (a real gzip body),
// are said in the report rather than passed over.
func TestReportSaysEmptyAndNotText(t *testing.T) {
	r := judgeWith(t, filepath.Join("..", "..", "testdata", "robots-odd", "schema.org.txt"), nil, nil)
	var text, page bytes.Buffer
	Render(&text, r, "text")
	Render(&page, r, "html")
	for _, want := range []string{"period               none: no request was read", "no request was read: the logs hold 0 lines",
		"robots.txt version ../../testdata/robots-odd/schema.org.txt is not text (gzip-compressed data)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text: no %q in\n%s", want, text.String())
		}
	}
	if !strings.Contains(page.String(), "none: no request was read") || !strings.Contains(page.String(), "is not text (gzip-compressed data)") {
		t.Errorf("html: %s", page.String())
	}
	kinds := []string{}
	for _, w := range r.Summary.Warnings {
		kinds = append(kinds, w.Kind)
	}
	if strings.Join(kinds, ",") != WarnEmptyLog+","+WarnRobotsNotText {
		t.Errorf("warnings %q", kinds)
	}
}
