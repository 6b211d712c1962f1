package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verifyProblem is one "FILE:LINE: KIND: why" line of audit verify.
type verifyProblem struct {
	file string
	line int
	kind string
}

func (p verifyProblem) String() string { return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.kind) }

var problemLine = regexp.MustCompile(`^(.+):(\d+): (chain|decision|altered|bad-line|unverifiable): `)

// runVerify runs "robotsproxy audit verify -archive DIR LOG" and returns
// its exit code and the problems it printed.
func runVerify(t *testing.T, archive, log string) (int, []verifyProblem, string) {
	t.Helper()
	stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, log)
	var probs []verifyProblem
	for _, l := range strings.Split(stdout, "\n") {
		if m := problemLine.FindStringSubmatch(l); m != nil && m[1] == log {
			n, _ := strconv.Atoi(m[2])
			probs = append(probs, verifyProblem{m[1], n, m[3]})
		}
	}
	return code, probs, stdout + stderr
}

// wantVerify checks that verify exits with code and prints exactly want.
func wantVerify(t *testing.T, what, archive, log string, code int, want []verifyProblem) {
	t.Helper()
	got, probs, out := runVerify(t, archive, log)
	if got != code || fmt.Sprint(probs) != fmt.Sprint(want) {
		t.Errorf("audit verify, %s: got exit code %d and problems %v, want %d and %v; output:\n%s", what, got, probs, code, want, out)
	}
}

// checkAuditVerify: verify passes on the untouched log and archive, and
// names the right line, and only it, for a deleted line, an edited
// decision and a swapped archived body. It returns a summary.
func checkAuditVerify(t *testing.T, logPath, archive string, origins []*auditOrigin, lines []map[string]any) string {
	t.Helper()
	wantVerify(t, "untouched log", archive, logPath, 0, nil)
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	rawLines := strings.SplitAfter(string(raw), "\n")
	rawLines = rawLines[:len(rawLines)-1] // after the last newline
	dir := t.TempDir()
	n := len(rawLines)

	// A line deleted: the next one, now at its number, breaks the chain.
	del := n/2 + 1
	deleted := filepath.Join(dir, "deleted.log")
	writeLines(t, deleted, append(append([]string{}, rawLines[:del-1]...), rawLines[del:]...))
	wantVerify(t, fmt.Sprintf("line %d deleted", del), archive, deleted, 1, []verifyProblem{{deleted, del, "chain"}})

	// One decision edited: the line re-decides otherwise, and the next
	// line's prev no longer matches it.
	edit := 0
	for i := n / 2; i < n-1 && edit == 0; i++ {
		if r := lines[i]["reason"]; lines[i]["decision"] == "allow" && (r == "rule" || r == "no-matching-rule") {
			edit = i + 1
		}
	}
	if edit == 0 {
		t.Fatalf("no allowed decision line with a successor in the second half of the log")
	}
	edited := filepath.Join(dir, "edited.log")
	changed := append([]string{}, rawLines...)
	changed[edit-1] = strings.Replace(changed[edit-1], `"decision":"allow"`, `"decision":"deny"`, 1)
	writeLines(t, edited, changed)
	wantVerify(t, fmt.Sprintf(`line %d's "allow" made "deny"`, edit), archive, edited, 1,
		[]verifyProblem{{edited, edit, "decision"}, {edited, edit + 1, "chain"}})

	// One archived body overwritten with another's: every decision line
	// that used it is on an altered archive.
	swapped := filepath.Join(dir, "archive")
	copyTree(t, archive, swapped)
	victim, donor := bodyFile(t, swapped, origins[0].sha), bodyFile(t, swapped, origins[1].sha)
	b, err := os.ReadFile(donor)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var altered []verifyProblem
	for i, l := range lines {
		if r := l["reason"]; l["robots_sha256"] == origins[0].sha && (r == "rule" || r == "no-matching-rule") {
			altered = append(altered, verifyProblem{logPath, i + 1, "altered"})
		}
	}
	if len(altered) == 0 {
		t.Fatalf("no decision line used robots.txt %s", origins[0].sha)
	}
	wantVerify(t, "body "+origins[0].sha[:12]+" swapped", swapped, logPath, 1, altered)
	forged := checkForgedAppends(t, archive, rawLines, lines)
	return fmt.Sprintf("%d lines OK; line %d deleted: chain at %d; line %d edited: decision at %d, chain at %d; body of %s swapped: %d lines altered; %s",
		n, del, del, edit, edit, edit+1, origins[0].file.name, len(altered), forged)
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bodyFile is the archive's file of the body with SHA-256 sha.
func bodyFile(t *testing.T, archive, sha string) string {
	t.Helper()
	p := filepath.Join(archive, "bodies", sha[:2], sha+".gz")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("archive: %v", err)
	}
	return p
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkAuditShow: "audit show -body SHA" prints the archived body.
func checkAuditShow(t *testing.T, archive string, o *auditOrigin) {
	t.Helper()
	stdout, stderr, code := runBinary(t, "", "audit", "show", "-archive", archive, "-body", o.sha)
	if code != 0 || stdout != string(o.file.body) {
		t.Errorf("audit show -body %s: got exit code %d and %d octets (stderr %q), want 0 and the %d octets of %s", o.sha, code, len(stdout), stderr, len(o.file.body), o.file.name)
	}
}

// writeAuditHTML renders the HTML report of the run and, when
// ROBOTSPROXY_SCREENSHOT names a PNG file and Chromium is installed,
// screenshots it there.
func writeAuditHTML(t *testing.T, logPath string) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	_, stderr, code := runBinary(t, "", "audit", "report", "-format", "html", "-o", page, logPath)
	if code != 0 {
		t.Fatalf("audit report -format html: got exit code %d, want 0; stderr:\n%s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Violations (report mode", "GPTBot", "Googlebot"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("HTML report: want %q in it", want)
		}
	}
	shot := os.Getenv("ROBOTSPROXY_SCREENSHOT")
	if shot == "" {
		return
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("SKIPPED the screenshot: chromium is not installed (apt-get install chromium)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars", "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("HTML report screenshot: %s", shot)
}
