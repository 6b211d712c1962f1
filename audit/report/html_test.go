package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/audit/report/loggen"
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
// errors, with its SVG charts, and renders to a non-blank screenshot. Set
// REPORT_SCREENSHOT=FILE.png to keep the screenshot.
func TestHTMLReportInChromium(t *testing.T) {
	dir := t.TempDir()
	paths, err := loggen.WriteRotated(dir, loggen.Config{Lines: 30_000, Hosts: 300, Step: 9 * time.Second}, 3)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Collect(paths, Options{Top: 25, Now: fixedNow})
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
	for _, want := range []string{"Violations (report mode", "Sites with the most refusals", "Decisions over time: googlebot"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM: want %q", want)
		}
	}
	shot := os.Getenv("REPORT_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	if _, console = chromium(t, page, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars"); len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	checkNotBlank(t, shot)
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
