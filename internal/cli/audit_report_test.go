package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/report"
	"github.com/robotsproxy/robotsproxy/internal/audit/report/loggen"
)

// runCLI runs the command line as a user types it and returns stdout,
// stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	code := exitCode(err, &stderr)
	return stdout.String(), stderr.String(), code
}

const portsLog = `{"time":"2026-11-22T10:00:00Z","url":"http://127.0.0.1:8001/a","decision":"allow","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:01Z","url":"http://127.0.0.1:8002/a","decision":"allow","reason":"rule","product_token":"gptbot"}
`

// -host takes the authority a user sees in the Hosts table; a filter that
// matches nothing says so on stderr, naming the sites the log has.
func TestAuditReportHostFilter(t *testing.T) {
	out, stderr, code := runCLI(t, portsLog, "audit", "report", "-host", "127.0.0.1:8001", "-")
	if code != 0 || stderr != "" || !strings.Contains(out, "http://127.0.0.1:8001") || strings.Contains(out, "127.0.0.1:8002") {
		t.Errorf("-host 127.0.0.1:8001: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	_, stderr, code = runCLI(t, portsLog, "audit", "report", "-host", "127.0.0.1:8009", "-")
	want := "audit report: no line matches the filters (host 127.0.0.1:8009): 2 lines left out; sites in the log include http://127.0.0.1:8001, http://127.0.0.1:8002\n"
	if code != 0 || stderr != want {
		t.Errorf("-host 127.0.0.1:8009: exit %d, stderr %q, want %q", code, stderr, want)
	}
	_, stderr, code = runCLI(t, portsLog, "audit", "report", "-host", "ftp://127.0.0.1", "-")
	if code != 2 || !strings.Contains(stderr, "-host") {
		t.Errorf("-host ftp://127.0.0.1: exit %d, stderr %q; want 2 and an error naming -host", code, stderr)
	}
}

// -format csv -o DIR writes one file a table that a CSV reader loads as
// data (a header row, every record as long); -table NAME writes one.
func TestAuditReportCSVTables(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(log, []byte(auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tables")
	if _, stderr, code := runCLI(t, "", "audit", "report", "-format", "csv", "-o", out, log); code != 0 {
		t.Fatalf("-format csv -o DIR: exit %d, stderr %q", code, stderr)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".csv"))
	}
	if want := report.TableNames(); !slices.Equal(slices.Sorted(slices.Values(want)), names) {
		t.Errorf("files %q, want one NAME.csv for each of %q", names, want)
	}
	for _, n := range names {
		f, err := os.Open(filepath.Join(out, n+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll() // fails when a record's length differs from the header's
		f.Close()
		if err != nil || len(recs) == 0 || recs[0][0] == "section" {
			t.Errorf("%s.csv: %v, %d records; want a header row of column names and records of its length", n, err, len(recs))
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "violations.csv"))
	if want := "token,host,robots_url,rule,rule_line,robots_sha256,reason,count,first_seen,last_seen,error,origin\ngptbot,b.example,,Disallow: /p,2,,rule,1,2026-11-22T10:01:00Z,2026-11-22T10:01:00Z,0,https://b.example\n"; string(b) != want {
		t.Errorf("violations.csv:\n%s\nwant\n%s", b, want)
	}

	stdout, stderr, code := runCLI(t, "", "audit", "report", "-format", "csv", "-table", "hosts", log)
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != 0 || err != nil || len(recs) != 3 || recs[0][0] != "origin" || recs[1][0] != "https://a.example" {
		t.Errorf("-table hosts: exit %d, stderr %q, records %q (%v)", code, stderr, recs, err)
	}
	one := filepath.Join(dir, "tokens.csv")
	if _, stderr, code := runCLI(t, "", "audit", "report", "-format", "csv", "-table", "tokens", "-o", one, log); code != 0 {
		t.Errorf("-table tokens -o FILE: exit %d, stderr %q", code, stderr)
	} else if b, _ := os.ReadFile(one); !strings.HasPrefix(string(b), "token,requests,allowed,") {
		t.Errorf("-table tokens -o FILE: got %q", b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-format", "csv", "-table", "nosuch"}, "-table"},
		{[]string{"-format", "text", "-table", "hosts"}, "want -format csv"},
		{[]string{"-format", "csv", "-o", filepath.Join(dir, "new.csv")}, "-table NAME"},
		{[]string{"-format", "csv", "-o", log}, "not a directory"},
	} {
		_, stderr, code := runCLI(t, "", append(append([]string{"audit", "report"}, c.args...), log)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// The report checks the chain of a log file by default and says what it
// found; -verify=false says plainly that it did not.
func TestAuditReportVerify(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(log, []byte(auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "audit", "report", log)
	if code != 0 || !strings.Contains(out, "hash chain               FAILED") || !strings.Contains(stderr, "the hash chain does not verify") {
		t.Errorf("an unchained log: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, "", "audit", "report", "-verify=false", log)
	if code != 0 || stderr != "" || !strings.Contains(out, "hash chain               NOT VERIFIED\nwhy                      not asked for (-verify=false)") {
		t.Errorf("-verify=false: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	_, stderr, code = runCLI(t, "", "audit", "report", "-verify=false", "-head", strings.Repeat("0", 64), log)
	if code != 2 || !strings.Contains(stderr, "-verify=false") {
		t.Errorf("-verify=false -head: exit %d, stderr %q; want 2", code, stderr)
	}
}

// -checkpoints and -head anchor the chain as for audit verify: passed,
// the block says so; a head the chain does not end at fails it.
func TestAuditReportAnchors(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := loggen.Write(&b, loggen.Config{Lines: 100, Hosts: 3, Chain: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(b.String(), "\n")
	log := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(log, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h50, h100 := sha256.Sum256([]byte(lines[49])), sha256.Sum256([]byte(lines[99]))
	ck := filepath.Join(dir, "checkpoints.log")
	cks := fmt.Sprintf(`{"time":"2026-11-01T00:00:12Z","head":"%x","lines":50}`+"\n"+`{"time":"2026-11-01T00:00:24Z","head":"%x","lines":100}`+"\n", h50, h100)
	if err := os.WriteFile(ck, []byte(cks), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "audit", "report", "-checkpoints", ck, "-head", fmt.Sprintf("%x", h100), log)
	if code != 0 || stderr != "" || !strings.Contains(out, "hash chain               VERIFIED") || !strings.Contains(out, "checkpoints              2 of 2 passed") {
		t.Errorf("-checkpoints, -head: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, "", "audit", "report", "-head", fmt.Sprintf("%x", h50), log)
	if code != 0 || !strings.Contains(out, "hash chain               FAILED") || !strings.Contains(stderr, "anchor") {
		t.Errorf("-head of line 50: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}
