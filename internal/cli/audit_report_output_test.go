package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAuditReportCSVNeutralisesFormulas: a cell taken from a request or a
// robots.txt that a spreadsheet would run as a formula gets a leading
// single quote (OWASP CSV injection guidance).
func TestAuditReportCSVNeutralisesFormulas(t *testing.T) {
	hostile := `{"time":"2026-11-22T10:01:00Z","url":"https://b.example/p","decision":"deny","reason":"rule","product_token":"-2+3","rule":"=HYPERLINK(\"http://evil\")","rule_line":2,"enforced":false}
{"time":"2026-11-22T10:02:00Z","url":"https://c.example/p","decision":"deny","reason":"rule","product_token":"@sum","rule":"+1","rule_line":3,"enforced":false}
`
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"audit", "report", "-format", "csv", "-"}, strings.NewReader(hostile), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	cr := csv.NewReader(strings.NewReader(stdout.String()))
	cr.FieldsPerRecord = -1 // each section has its own columns
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("csv output does not parse: %v", err)
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		for _, cell := range rec {
			seen[cell] = true
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q starts with a formula character; row %q", cell, rec)
			}
		}
	}
	for _, want := range []string{`'=HYPERLINK("http://evil")`, "'-2+3", "'@sum", "'+1"} {
		if !seen[want] {
			t.Errorf("no cell %q in\n%s", want, stdout.String())
		}
	}
}

// TestAuditReportOutputMustBeAFile: -o replaces a regular file or creates
// one, and refuses a directory, a FIFO or a device with a clear error.
func TestAuditReportOutputMustBeAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{{dir, "a directory"}, {fifo, "a FIFO"}}
	// A character device of our own (a copy of /dev/null's numbers), never
	// a system one: code without the check would rename a file over it.
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o600, 1<<8|3); err == nil {
		cases = append(cases, struct{ path, want string }{dev, "a device"})
	} else {
		t.Logf("no device case: mknod needs root (%v)", err)
	}
	for _, tt := range cases {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"audit", "report", "-o", tt.path, "-"}, strings.NewReader(auditLines), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("-o %s: exit %d, stderr %q; want exit 2 naming %q", tt.path, code, stderr.String(), tt.want)
		}
	}
	if fi, err := os.Stat(dev); err == nil && fi.Mode()&os.ModeDevice == 0 {
		t.Errorf("%s was replaced by a regular file", dev)
	}
}
