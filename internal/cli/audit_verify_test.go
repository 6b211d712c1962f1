package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/audittest"
)

func TestRunAuditVerifyAndShow(t *testing.T) {
	archive, log, sha := audittest.ChainedLog(t)
	edited := filepath.Join(filepath.Dir(log), "edited.log")
	b, _ := os.ReadFile(log)
	os.WriteFile(edited, bytes.Replace(b, []byte(`"decision":"allow"`), []byte(`"decision":"deny"`), 1), 0o644)
	cfg := filepath.Join(filepath.Dir(log), "robotsproxy.yaml")
	os.WriteFile(cfg, []byte("audit:\n  archive_dir: "+archive+"\n"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string // in stdout
	}{
		{"verify ok", []string{"audit", "verify", "-archive", archive, log}, 0, "decisions    2: 2 verified, 0 differ"},
		{"verify names the chain start", []string{"audit", "verify", "-archive", archive, log}, 0, "chain start  " + log + ":1, prev 0000"},
		{"archive from -config", []string{"audit", "verify", "-config", cfg, log}, 0, "result       OK"},
		{"edited decision", []string{"audit", "verify", "-archive", archive, edited}, 1, edited + ":2: decision: logged deny (no-matching-rule, group examplebot), but robots.txt"},
		{"-config missing", []string{"audit", "verify", "-config", filepath.Join(t.TempDir(), "none.yaml"), log}, 2, ""},
		{"missing log", []string{"audit", "verify", "-archive", archive, log + ".missing"}, 2, ""},
		{"no log", []string{"audit", "verify", "-archive", archive}, 2, ""},
		{"show", []string{"audit", "show", "-archive", archive, sha[:8]}, 0, "http://a.example/robots.txt status 200 successful"},
		{"show from -config", []string{"audit", "show", "-config", cfg, "-body", sha}, 0, "User-agent: examplebot\nDisallow: /private\n"},
		{"show unknown", []string{"audit", "show", "-archive", archive, strings.Repeat("ab", 32)}, 2, ""},
		{"show bad sha", []string{"audit", "show", "-archive", archive, "xyz"}, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tt.code {
				t.Fatalf("exit: got %d, want %d; stdout %q, stderr %q", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("stdout: want %q in\n%s", tt.want, stdout.String())
			}
		})
	}
}

// TestRunAuditVerifyWithoutArchive: with no archive named anywhere only
// the chain is checked (-chain-only, said on stderr): exit 0 when it
// holds, 1 when a line was edited.
func TestRunAuditVerifyWithoutArchive(t *testing.T) {
	archive, log, _ := audittest.ChainedLog(t)
	b, _ := os.ReadFile(log)
	edited := filepath.Join(filepath.Dir(log), "edited.log") // the first line: the second's prev no longer matches
	os.WriteFile(edited, bytes.Replace(b, []byte(`"decision":"deny"`), []byte(`"decision":"allow"`), 1), 0o644)
	t.Chdir(t.TempDir()) // no ./config.yaml
	const notice = "checking the hash chain only (-chain-only)"
	for _, tt := range []struct {
		args       []string
		code       int
		want       string // in stdout
		wantNotice bool
	}{
		{[]string{"audit", "verify", log}, 0, "result       OK: the chain holds", true},
		{[]string{"audit", "verify", log}, 0, "audit lines  2, chained", true},
		{[]string{"audit", "verify", "-chain-only", log}, 0, "decisions    not re-decided (-chain-only", false},
		{[]string{"audit", "verify", "-chain-only", "-archive", archive, log}, 0, "result       OK: the chain holds", false},
		{[]string{"audit", "verify", edited}, 1, edited + ":2: chain: prev", true},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != tt.code {
			t.Errorf("%v: exit got %d, want %d; stdout:\n%s", tt.args, code, tt.code, stdout.String())
		}
		if !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("%v: want %q in\n%s", tt.args, tt.want, stdout.String())
		}
		if strings.Contains(stdout.String(), "unverifiable:") {
			t.Errorf("%v: got unverifiable lines without an archive:\n%s", tt.args, stdout.String())
		}
		if got := strings.Contains(stderr.String(), notice); got != tt.wantNotice {
			t.Errorf("%v: notice %q on stderr: got %v, want %v; stderr %q", tt.args, notice, got, tt.wantNotice, stderr.String())
		}
	}
}

// TestRunAuditVerifyOperationalLines: serve's own log messages in the
// audit log's file (stdout and stderr to one file) are named and skipped,
// neither problems nor links of the chain.
func TestRunAuditVerifyOperationalLines(t *testing.T) {
	archive, log, _ := audittest.ChainedLog(t)
	b, _ := os.ReadFile(log)
	lines := strings.SplitAfter(string(b), "\n")
	op := `{"level":"info","listener":"proxy","addr":"127.0.0.1:8080","time":"2026-11-22T20:10:49Z","message":"listening"}` + "\n"
	mixed := filepath.Join(filepath.Dir(log), "mixed.log")
	os.WriteFile(mixed, []byte(op+lines[0]+op+lines[1]), 0o644)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"audit", "verify", "-archive", archive, mixed}, strings.NewReader(""), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 0 {
		t.Fatalf("exit: got %d, want 0; stdout:\n%s", code, stdout.String())
	}
	for _, want := range []string{"lines        4 in 1 files", "decisions    2: 2 verified", "operational  2 of the proxy's own log messages", "chain        intact", "result       OK"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("want %q in\n%s", want, stdout.String())
		}
	}
}
