package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func fixedNow() time.Time { return at("2026-11-22T12:00:00Z") }

func renderSample(t *testing.T, format string) (*Report, string) {
	t.Helper()
	rep, _ := collectSample(t, Options{Now: fixedNow})
	var b bytes.Buffer
	if err := Render(&b, rep, format); err != nil {
		t.Fatalf("Render %s: %v", format, err)
	}
	return rep, b.String()
}

func TestRenderJSONRoundTrip(t *testing.T) {
	rep, out := renderSample(t, "json")
	var got Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if !reflect.DeepEqual(got.Violations, rep.Violations) || !reflect.DeepEqual(got.Summary.Decisions, rep.Summary.Decisions) || got.Version != SchemaVersion {
		t.Errorf("round trip: got %+v, want %+v", got.Violations, rep.Violations)
	}
}

func TestRenderCSV(t *testing.T) {
	_, out := renderSample(t, "csv")
	cr := csv.NewReader(strings.NewReader(out))
	cr.FieldsPerRecord = -1 // each section has its own columns
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	sections := map[string]int{}
	var violation []string
	for _, r := range recs {
		sections[r[0]]++
		if r[0] == "violations" && r[4] == "Disallow: /p" {
			violation = r
		}
	}
	for _, s := range []string{"summary", "integrity", "decisions", "reasons", "access_results", "token_sources", "tokens", "violations", "hosts", "rules", "denied_urls", "spend", "inputs", "skipped"} {
		if sections[s] == 0 {
			t.Errorf("csv: no %q rows", s)
		}
	}
	if sections["section"] != 16 {
		t.Errorf("csv: got %d header rows, want 16", sections["section"])
	}
	want := []string{"violations", "gptbot", "b.example", "https://b.example/robots.txt", "Disallow: /p", "2", "bbb1", "rule", "2", "2026-11-22T10:01:00Z", "2026-11-22T10:02:00Z", "0", "https://b.example"}
	if !reflect.DeepEqual(violation, want) {
		t.Errorf("csv violation row: got %q, want %q", violation, want)
	}
}

func TestRenderText(t *testing.T) {
	_, out := renderSample(t, "text")
	for _, want := range []string{
		"robotsproxy audit report, generated 2026-11-22T12:00:00Z",
		"skipped                 3 lines, first at ",
		"== Violations (report mode: forwarded although robots.txt refused them) ==",
		"gptbot   https://b.example  https://b.example/robots.txt  Disallow: /p          2  bbb1                rule                2  2026-11-22T10:01:00Z",
		"https://b.example         5        0                               4                   3                       0                       2                    1             2m0s  no                                              2  bbb2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text: want %q in\n%s", want, out)
		}
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	if err := Render(&bytes.Buffer{}, rep, "xml"); err == nil {
		t.Error("format xml: got no error")
	}
}

// Hostile strings from the log are escaped in the page and its charts.
func TestRenderHTMLEscapes(t *testing.T) {
	evil := `{"time":"2026-11-22T10:00:00Z","url":"https://x.example/<script>alert(1)</script>","decision":"deny","reason":"rule","product_token":"<img src=x onerror=alert(1)>","rule":"Disallow: /</td>","enforced":false}` + "\n"
	p := writeFile(t, t.TempDir(), "audit.log", evil+sampleLog)
	rep, err := Collect([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "html"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// No script, no unescaped log text, nothing fetched (the SVG
	// namespace URIs name, they do not load).
	for _, bad := range []string{"<script", "<img", "Disallow: /</td>", "<link", "url(", "@import", "<iframe", "<object"} {
		if strings.Contains(out, bad) {
			t.Errorf("html: found %q", bad)
		}
	}
	if !strings.Contains(out, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("html: the hostile token is not shown escaped")
	}
	if n := strings.Count(out, "<svg "); n < 4 {
		t.Errorf("html: got %d charts, want at least 4", n)
	}
}

// An empty log (or one with only bad lines) renders in every format.
func TestRenderEmpty(t *testing.T) {
	for _, content := range []string{"", "garbage\n"} {
		p := writeFile(t, t.TempDir(), "audit.log", content)
		rep, err := Collect([]string{p}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Formats() {
			var b bytes.Buffer
			if err := Render(&b, rep, f); err != nil || b.Len() == 0 {
				t.Errorf("%q as %s: got %d octets, error %v", content, f, b.Len(), err)
			}
		}
	}
}

// The streamed JSON is the Report as encoding/json writes it.
func TestRenderJSONStreamsTheReport(t *testing.T) {
	rep, out := renderSample(t, "json")
	want, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got, exp any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("streamed JSON: %v\n%s", err, out)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("streamed JSON differs:\ngot  %s\nwant %s", out, want)
	}
}
