package accesslog

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func historyDir(t *testing.T, versions map[string]string) *History {
	t.Helper()
	dir := t.TempDir()
	for name, body := range versions {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := LoadHistory(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func line(at, client, path, ua string) string {
	tm, _ := time.Parse(time.RFC3339, at)
	return fmt.Sprintf("%s - - [%s] \"GET %s HTTP/1.1\" 200 1 \"-\" \"%s\"\n", client, tm.Format("02/Jan/2006:15:04:05 -0700"), path, ua)
}

func judgeLog(t *testing.T, h *History, log string) *Result {
	t.Helper()
	a, err := New(Options{History: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Read(context.Background(), "x.log", strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Result(0)
	if err := r.Load(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHostileLinesAreCountedAndSkipped(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n"})
	log := line("2026-11-05T00:00:00Z", "1.2.3.4", "/p", "B/1") +
		strings.Repeat(line("2026-11-05T00:00:00Z", "1.2.3.4", "/q", "B/1"), 5) + // most lines parse: the log is in the format
		"garbage\n" +
		"1.2.3.4 - - [05/Nov/2026:00:00:00 +0000] \"GET /p" + strings.Repeat("x", 1<<20) + " HTTP/1.1\" 200 1 \"-\" \"B/1\"\n" +
		"1.2.3.4 - - [05/Nov/2026:00:00:00 +0000] \"GET /p\xff HTTP/1.1\" 200 1 \"-\" \"B/1\"\n" +
		"\n" +
		strings.Repeat("y", 3*MaxLine) + // an overlong last line without a line feed
		"\n" + line("2026-11-05T00:00:01Z", "1.2.3.4", "/p", "B/1")[:40] // cut short
	r := judgeLog(t, h, log)
	if s := r.Summary.Skipped; s.Malformed != 2 || s.TooLong != 2 || s.InvalidUTF8 != 1 {
		t.Errorf("skipped %+v", s)
	}
	if len(r.Violations) != 1 || r.Violations[0].Line != 1 || r.Summary.Lines != 12 {
		t.Errorf("violations %+v, lines %d", r.Violations, r.Summary.Lines)
	}
	// Each skipped line is located, with why.
	var got []string
	for _, s := range r.SkippedLines {
		got = append(got, s.String())
	}
	want := []string{"x.log:7 malformed: no client address", "x.log:8 too_long", "x.log:9 invalid_utf8", "x.log:11 too_long",
		"x.log:12 malformed: no quoted request line"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWindow(t *testing.T) {
	h := historyDir(t, map[string]string{
		"2026-11-10T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n",
		"2026-11-12T00-00-00Z.txt": "User-agent: *\nDisallow: /q\n",
	})
	tests := []struct {
		name, log  string
		violations int
		disputable int
		unjudged   int64
	}{
		{"before the history", line("2026-11-09T00:00:00Z", "1.2.3.4", "/p", "B/1"), 0, 0, 1},
		// The 24 hours before reach before the first version: what was in
		// force then is unknown, so at most disputable.
		{"first day", line("2026-11-10T05:00:00Z", "1.2.3.4", "/p", "B/1"), 0, 1, 0},
		{"first day, fetched", line("2026-11-10T04:00:00Z", "1.2.3.4", "/robots.txt", "B/1") +
			line("2026-11-10T05:00:00Z", "1.2.3.4", "/p", "B/1"), 1, 0, 0},
		{"settled", line("2026-11-11T05:00:00Z", "1.2.3.4", "/p", "B/1"), 1, 0, 0},
		{"after a change", line("2026-11-12T05:00:00Z", "1.2.3.4", "/p", "B/1"), 0, 1, 0},
		{"another crawler's fetch", line("2026-11-12T01:00:00Z", "1.2.3.4", "/robots.txt", "Other/1") +
			line("2026-11-12T05:00:00Z", "1.2.3.4", "/q", "B/1"), 0, 1, 0},
		{"own fetch", line("2026-11-12T01:00:00Z", "1.2.3.4", "/robots.txt", "B/2") +
			line("2026-11-12T05:00:00Z", "1.2.3.4", "/q", "B/1"), 1, 0, 0},
		{"browser", line("2026-11-11T05:00:00Z", "1.2.3.4", "/p", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"), 0, 0, 0},
		{"robots.txt spelled otherwise", line("2026-11-11T05:00:00Z", "1.2.3.4", "/%72obots.txt", "B/1"), 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judgeLog(t, h, tt.log)
			if len(r.Violations) != tt.violations || len(r.Disputable) != tt.disputable || r.Summary.Unjudged != tt.unjudged {
				t.Errorf("violations %d disputable %d unjudged %d; want %d %d %d", len(r.Violations), len(r.Disputable), r.Summary.Unjudged,
					tt.violations, tt.disputable, tt.unjudged)
			}
		})
	}
}

// A history of 10,000 versions is read lazily, and the compiled versions
// kept stay under historyBytes.
func TestLongHistoryStaysBounded(t *testing.T) {
	var vs []Version
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10000 {
		body := fmt.Appendf(nil, "User-agent: *\nDisallow: /v%d\n%s", i, strings.Repeat("# padding\n", 300))
		vs = append(vs, Version{From: start.Add(time.Duration(i) * time.Minute), Source: fmt.Sprint(i),
			load: func() ([]byte, bool, error) { return body, false, nil }})
	}
	h, err := newHistory(vs)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := range 200 {
		log.WriteString(line(start.Add(time.Duration(50*i)*time.Minute).Format(time.RFC3339), "1.2.3.4", "/v1", "B/1"))
	}
	r := judgeLog(t, h, log.String())
	if h.cache.Size() > historyBytes || h.cache.Len() == 10000 || r.Summary.Versions != 10000 {
		t.Errorf("%d octets of versions kept, %d versions in the history", h.cache.Size(), r.Summary.Versions)
	}
	// Version 1 (from 00:01) alone disallows /v1; it is among those of the
	// 24 hours before the requests at 00:50, 01:40, ... up to 23:20.
	if len(r.Disputable) != 28 || len(r.Violations) != 0 {
		t.Errorf("violations %d disputable %d", len(r.Violations), len(r.Disputable))
	}
}

func TestVersionTime(t *testing.T) {
	for name, ok := range map[string]bool{
		"2026-11-20T00:00:00Z.txt": true, "2026-11-20T00-00-00Z.txt": true, "2026-11-20T00:00:00Z": true,
		"2026-11-20T00:00:00+01:00.txt": false, "robots.txt": false, "2026-11-20.txt": false,
	} {
		if _, err := VersionTime(name); (err == nil) != ok {
			t.Errorf("%s: %v", name, err)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "robots.txt"), nil, 0o644)
	if _, err := LoadHistory(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "2026-11-20T00:00:00Z.txt") {
		t.Errorf("a badly named version: %v", err)
	}
	if _, err := LoadHistory(context.Background(), "git:"+dir); err == nil {
		t.Error("git: without a path")
	}
}

func TestRenderFormats(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n"})
	r := judgeLog(t, h, line("2026-11-05T00:00:00Z", "1.2.3.4", "/p", "BBot/1")+line("2026-11-05T00:00:00Z", "1.2.3.4", "/p<script>", "curl/8.5.0"))
	catalogue := r.Summary.Catalogue
	if !strings.Contains(catalogue, "crawler-user-agents@") || len(r.Crawlers) != 1 || len(r.OtherClients) != 1 || r.OtherClients[0].Token != "curl" {
		t.Fatalf("catalogue %q, crawlers %+v, other clients %+v", catalogue, r.Crawlers, r.OtherClients)
	}
	for _, f := range Formats() {
		var buf bytes.Buffer
		if err := Render(&buf, r, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := buf.String()
		if !strings.Contains(out, catalogue) {
			t.Errorf("%s: no catalogue version %q", f, catalogue)
		}
		if fam := r.Summary.BrowserFamilies; f != "csv" && (!strings.HasPrefix(fam, "uap-core@") || !strings.Contains(out, fam)) {
			t.Errorf("%s: no browser families' version %q", f, fam)
		}
		switch f {
		case "csv":
			rows, err := csv.NewReader(&buf).ReadAll()
			class := slices.Index(csvHeader, "class")
			if err != nil || len(rows) != 3 || len(rows[1]) != len(csvHeader) || rows[1][0] != KindViolation ||
				rows[1][class] != ClassCrawler || rows[2][class] != ClassOther {
				t.Errorf("csv: %v %q", err, rows)
			}
		case "html":
			for _, want := range []string{`<section id="c-BBot">`, `<section id="o-curl">`, "Other clients", "Disallow: /p", "/p&lt;script&gt;", "Words used", `<svg class="chart"`, "Requests per day: BBot"} {
				if !strings.Contains(out, want) {
					t.Errorf("html: no %q", want)
				}
			}
		case "text":
			for _, want := range []string{`x.log:1 2026-11-05T00:00:00Z 1.2.3.4 BBot "BBot/1" GET /p rule="Disallow: /p" line=2`,
				`x.log:2 2026-11-05T00:00:00Z 1.2.3.4 curl "curl/8.5.0" GET /p<script> class=other rule=`, "\nother client "} {
				if !strings.Contains(out, want) {
					t.Errorf("text: no %q in\n%s", want, out)
				}
			}
		case "json":
			if !strings.Contains(out, `"other_clients":[{"product_token":"curl","class":"other","catalogue":{"source":"crawler-user-agents","tags":["http-library"]`) {
				t.Errorf("json: no other client curl, with its catalogue entry, in %s", out)
			}
		}
	}
	if err := Render(&bytes.Buffer{}, r, "xml"); err == nil {
		t.Error("xml: want an error")
	}
}

// Findings kept on disk render as the same JSON as findings in memory.
func TestSpilledFindingsRenderTheSame(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n"})
	a, err := New(Options{History: h, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var log strings.Builder
	for i := range 1000 {
		log.WriteString(line("2026-11-05T00:00:00Z", "1.2.3.4", fmt.Sprintf("/p%d", i), "B/1"))
	}
	a.Read(context.Background(), "x.log", strings.NewReader(log.String()))
	var disk, mem bytes.Buffer
	r := a.Result(0)
	if err := Render(&disk, r, "json"); err != nil {
		t.Fatal(err)
	}
	if err := r.Load(); err != nil || len(r.Violations) != 1000 {
		t.Fatalf("%v, %d", err, len(r.Violations))
	}
	Render(&mem, r, "json")
	if disk.String() != mem.String() {
		t.Error("the JSON differs")
	}
}

func TestReadStopsWithContext(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n"})
	a, err := New(Options{History: h})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	log := strings.Repeat(line("2026-11-05T00:00:00Z", "1.2.3.4", "/a", "B/1"), 5000)
	if err := a.Read(ctx, "x.log", strings.NewReader(log)); err == nil || !strings.Contains(err.Error(), "stopped at line 4096") {
		t.Errorf("err = %v", err)
	}
}

// The summary names each log file read with its SHA-256 as stored and
// its line count, gzipped or not.
func TestInputsAreHashed(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /p\n"})
	a, err := New(Options{History: h})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := t.TempDir()
	plain := []byte(strings.Repeat(line("2026-11-05T00:00:00Z", "1.2.3.4", "/a", "B/1"), 3000))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	for _, f := range []struct {
		name string
		body []byte
	}{{"a.log", plain}, {"a.log.gz", gz.Bytes()}} {
		name, body := f.name, f.body
		p := filepath.Join(dir, name)
		os.WriteFile(p, body, 0o644)
		if err := a.ReadFile(context.Background(), p, nil); err != nil {
			t.Fatal(err)
		}
	}
	in := a.Result(0).Summary.Inputs
	if len(in) != 2 || in[0].Lines != 3000 || in[0].SHA256 != fmt.Sprintf("%x", sha256.Sum256(plain)) {
		t.Errorf("inputs %+v", in)
	}
	if in[1].Lines != 3000 || in[1].SHA256 != fmt.Sprintf("%x", sha256.Sum256(gz.Bytes())) {
		t.Errorf("gzip input %+v", in[1])
	}
}
