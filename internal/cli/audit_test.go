package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const auditLines = `{"time":"2026-11-22T10:00:00Z","url":"https://a.example/x","decision":"allow","reason":"no-matching-rule","product_token":"googlebot"}
{"time":"2026-11-22T10:01:00Z","url":"https://b.example/p","decision":"deny","reason":"rule","product_token":"gptbot","rule":"Disallow: /p","rule_line":2,"enforced":false}
not json
`

func TestRunAuditReport(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(log, []byte(auditLines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.json")
	for _, tt := range []struct {
		name  string
		args  []string
		stdin string
		want  string // in stdout
	}{
		{"text to stdout", []string{"audit", "report", log}, "", "skipped                 1 lines, first at " + log + ":3"},
		{"stdin", []string{"audit", "report", "-format", "csv", "-"}, auditLines, "violations,gptbot,b.example,,Disallow: /p,2,,rule,1,"},
		{"filters", []string{"audit", "report", "-token", "gptbot", "-since", "2026-11-22", "-until", "2026-11-23T00:00:00Z", log}, "", "left out by filters     1"},
		{"json to a file", []string{"audit", "report", "-format", "json", "-o", out, log}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("stdout: want %q in\n%s", tt.want, stdout.String())
			}
		})
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Summary struct{ Requests, Skipped int }
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Summary.Requests != 2 || rep.Summary.Skipped != 1 {
		t.Errorf("-o file: got %+v (%v), want 2 requests, 1 skipped", rep.Summary, err)
	}
	if _, err := os.Stat(out + ".tmp"); err == nil {
		t.Error("-o left its temporary file")
	}
}

func TestRunAuditErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"audit"}, "want a subcommand"},
		{"unknown subcommand", []string{"audit", "frobnicate"}, "unknown subcommand"},
		{"no log", []string{"audit", "report"}, "want at least one LOG"},
		{"bad format", []string{"audit", "report", "-format", "xml", "x.log"}, "-format"},
		{"bad since", []string{"audit", "report", "-since", "last tuesday", "x.log"}, "-since"},
		{"missing log", []string{"audit", "report", filepath.Join(dir, "missing.log")}, "no such file"},
		{"unwritable output", []string{"audit", "report", "-o", filepath.Join(dir, "no", "dir", "r.txt"), "-"}, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 2 {
				t.Errorf("got exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr: want %q in %q", tt.want, stderr.String())
			}
		})
	}
}
