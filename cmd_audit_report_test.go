package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
