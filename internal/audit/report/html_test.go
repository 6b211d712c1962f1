package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/robotsproxy/robotsproxy/internal/audit/report/loggen"
)

// chromium runs headless Chromium on the page at path with extra flags
// and returns its stdout and the console messages it logged. The test is
// skipped when Chromium is not installed (Debian: apt-get install chromium).
func chromium(t *testing.T, path string, flags ...string) (string, []string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser check of the HTML report")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+path)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String(), regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`).FindAllString(stderr.String(), -1)
}

// The console check itself catches errors: a page with a script error.
func TestChromiumSeesConsoleErrors(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bad.html", `<!DOCTYPE html><p>x</p><script>undefinedFunction()</script>`)
	_, console := chromium(t, p, "--dump-dom")
	if len(console) == 0 {
		t.Fatal("chromium reported no console error for a page with one")
	}
}

// The HTML report of a realistic log opens in Chromium without console
// errors, with its SVG charts, the integrity block and no empty section,
// and renders to non-blank screenshots at a desktop and a phone width.
// Set REPORT_SCREENSHOT=FILE.png to keep the desktop screenshot (the
// manual's docs/report.png).
func TestHTMLReportInChromium(t *testing.T) {
	dir := t.TempDir()
	paths, err := loggen.WriteRotated(dir, loggen.Config{Lines: 30_000, Hosts: 300, Step: 9 * time.Second, Chain: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Collect(paths, Options{Top: 25, Now: fixedNow, Verify: &ChainCheck{}})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := Render(&b, rep, "html"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := chromium(t, page, "--dump-dom")
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if n := strings.Count(dom, `<svg class="chart"`); n != 2+len(rep.Timelines.Tokens)+1 {
		t.Errorf("DOM: got %d charts, want %d", n, 2+len(rep.Timelines.Tokens)+1)
	}
	for _, want := range []string{"Violations (report mode", "Sites with the most refusals", "Decisions over time: googlebot",
		`<section id="integrity" class="ok">`, "Hash chain: VERIFIED", rep.Integrity.LastLineSHA256, "lines that are not JSON",
		`<section id="glossary">`, "<dt>" + labelWouldDeny + "</dt>", "<dt>unreachable periods</dt>", "<dt>" + labelNotDecided + "</dt>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM: want %q", want)
		}
	}
	checkNoEmptySection(t, dom)
	if strings.Contains(dom, "Spend") {
		t.Error("DOM: a Spend section, with pay per crawl off")
	}
	for _, width := range []int{1280, 420} {
		shot := filepath.Join(dir, fmt.Sprintf("report-%d.png", width))
		if env := os.Getenv("REPORT_SCREENSHOT"); env != "" && width == 1280 {
			shot = env
		}
		if _, console = chromium(t, page, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,2000", width), "--hide-scrollbars"); len(console) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
		}
		checkNotBlank(t, shot)
	}
}

// checkNoEmptySection fails for an empty section of the DOM (see
// emptySections).
func checkNoEmptySection(t *testing.T, dom string) {
	t.Helper()
	empty, n, err := emptySections(dom)
	if err != nil {
		t.Fatal(err)
	}
	if len(empty) > 0 || n < 5 {
		t.Errorf("DOM: %d sections, empty ones %q; want the report's, none empty", n, empty)
	}
}

// emptySections returns the ids of the <section>s without a table cell,
// a chart, a finding or a definition (a heading over nothing), and how
// many sections there are.
func emptySections(dom string) ([]string, int, error) {
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		return nil, 0, err
	}
	var empty []string
	sections := 0
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != "section" {
			continue
		}
		sections++
		full := false
		for d := range n.Descendants() {
			if d.Type == html.ElementNode && (d.Data == "td" || d.Data == "svg" || d.Data == "dd" ||
				d.Data == "p" && slices.Contains(d.Attr, html.Attribute{Key: "class", Val: "finding"})) {
				full = true
				break
			}
		}
		if !full {
			id := ""
			for _, a := range n.Attr {
				if a.Key == "id" {
					id = a.Val
				}
			}
			empty = append(empty, id)
		}
	}
	return empty, sections, nil
}

// The check itself finds an empty section.
func TestEmptySectionsFindsOne(t *testing.T) {
	dom := `<section id="a"><h2>A</h2><table><tr><th>x</th></tr></table></section><section id="b"><table><tr><td>1</td></tr></table></section><section id="c"><p class="finding">None.</p></section>`
	if empty, n, err := emptySections(dom); err != nil || n != 3 || !slices.Equal(empty, []string{"a"}) {
		t.Errorf("got %q of %d (%v), want [a] of 3", empty, n, err)
	}
}

// A log with no report mode, no access result and no pay per crawl
// leaves those sections out of the page, and says in a sentence that
// there were no violations.
func TestHTMLLeavesOutWhatDidNotHappen(t *testing.T) {
	log := `{"time":"2026-11-22T10:00:00Z","url":"https://a.example/1","decision":"allow","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:01Z","url":"https://a.example/2","decision":"deny","reason":"rule","product_token":"gptbot","rule":"Disallow: /2","rule_line":2,"robots_url":"https://a.example/robots.txt"}
`
	rep, err := Collect([]string{writeFile(t, t.TempDir(), "audit.log", log)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "html"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkNoEmptySection(t, page)
	for _, absent := range []string{"Spend", "robots.txt access when", `id="access_results"`, `id="skipped"`, labelWouldDeny + "</div>", "report mode only", "overcount up to</th>"} {
		if strings.Contains(page, absent) {
			t.Errorf("page: want no %q", absent)
		}
	}
	for _, th := range regexp.MustCompile(`<th[^>]*>([^<]*)</th>`).FindAllStringSubmatch(page, -1) {
		if strings.Contains(th[1], "_") || th[1] == "err" || th[1] == "error" {
			t.Errorf("page: column %q is not in plain words", th[1])
		}
	}
	for _, want := range []string{"None: report mode was off", `id="rules"`, "Hash chain: NOT VERIFIED", ">" + labelRefusedRule + "</th>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page: want %q", want)
		}
	}
	var text strings.Builder
	if err := Render(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "Spend") || !strings.Contains(text.String(), "None: report mode was off") {
		t.Errorf("text: want no Spend section and the no-violations sentence:\n%s", text.String())
	}
}

// checkNotBlank fails unless the PNG has many coloured pixels (the chart
// lines and bars are green, red, orange and purple).
func checkNotBlank(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colored := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if max(r, g, b)-min(r, g, b) > 0x4000 {
				colored++
			}
		}
	}
	if colored < 2000 {
		t.Errorf("screenshot %s: %d coloured pixels sampled, want a page with charts", path, colored)
	}
}
