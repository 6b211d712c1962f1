package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportHostileInput: through the binary, a CSV cell taken from a
// request that a spreadsheet would run as a formula gets a leading quote,
// and -o refuses a FIFO and a directory instead of writing into them.
func TestReportHostileInput(t *testing.T) {
	log := `{"time":"2026-11-22T10:01:00Z","url":"https://b.example/p","decision":"deny","reason":"rule","product_token":"-2+3","rule":"=HYPERLINK(\"http://evil\")","rule_line":2,"enforced":false}` + "\n"
	stdout, stderr, code := runBinary(t, log, "audit", "report", "-format", "csv", "-")
	if code != 0 {
		t.Fatalf("audit report -format csv: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, `'=HYPERLINK(""http://evil"")`) || !strings.Contains(stdout, ",'-2+3,") {
		t.Errorf("csv output does not neutralise the formula cells:\n%s", stdout)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fifo, dir} {
		_, stderr, code := runBinary(t, log, "audit", "report", "-o", out, "-")
		if code != 2 || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("audit report -o %s: exit %d, stderr %q; want exit 2, not a regular file", out, code, stderr)
		}
	}
	if fi, err := os.Stat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}
