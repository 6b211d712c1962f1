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

// TestFlagsAnywhere: every command takes its flags before, between or
// after its arguments alike, and "--" ends the flags; a command that takes
// no arguments refuses them with the same error wherever they are.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	archive, log, sha := audittest.ChainedLog(t)
	accessLog := filepath.Join("..", "..", "testdata", "accesslog", "apache_logs.gz") // an access log: the audit log is refused as one
	same := []struct {
		name string
		a, b []string // the same command, flags placed differently
	}{
		{"check -json", []string{"check", "-json", robots, "Bot", "/action/x"}, []string{"check", robots, "Bot", "/action/x", "-json"}},
		{"check -rfc between", []string{"check", "-rfc", robots, "Bot", "/a"}, []string{"check", robots, "-rfc", "Bot", "/a"}},
		{"audit report -format", []string{"audit", "report", "-format", "json", log}, []string{"audit", "report", log, "-format", "json"}},
		{"audit access-log -format", []string{"audit", "access-log", "-robots", robots, "-format", "json", accessLog}, []string{"audit", "access-log", accessLog, "-format", "json", "-robots", robots}},
		{"audit verify -archive", []string{"audit", "verify", "-archive", archive, log}, []string{"audit", "verify", log, "-archive", archive}},
		{"audit show -body", []string{"audit", "show", "-archive", archive, "-body", sha}, []string{"audit", "show", sha, "-body", "-archive", archive}},
		{"keys init -valid", []string{"keys", "init", "-valid", "0", filepath.Join(dir, "k")}, []string{"keys", "init", filepath.Join(dir, "k"), "-valid", "0"}},
		{"version", []string{"version"}, []string{"-version"}},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			var outA, outB bytes.Buffer
			codeA := exitCode(run(context.Background(), tt.a, nil, &outA, &bytes.Buffer{}), &outA)
			if tt.name == "keys init -valid" { // the keys are new each time: compare the files written
				os.RemoveAll(filepath.Join(dir, "k"))
			}
			codeB := exitCode(run(context.Background(), tt.b, nil, &outB, &bytes.Buffer{}), &outB)
			if codeA != codeB || codeA == 2 {
				t.Errorf("exit codes %d (%q) and %d (%q): want the same, not 2; output:\n%s\n%s", codeA, tt.a, codeB, tt.b, outA.String(), outB.String())
			}
			a, b := outA.String(), outB.String()
			if tt.name == "keys init -valid" {
				a, b = firstLine(a), firstLine(b)
			}
			if a != b {
				t.Errorf("%q printed %q\n%q printed %q\nwant the same", tt.a, a, tt.b, b)
			}
		})
	}
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"check", robots, "Bot", "--", "-json"}, `URL "-json"`},
		{[]string{"audit", "report", log, "--", "-format", "json"}, "-format"},
		{[]string{"serve", "extra", "-check-config"}, `serve: unexpected arguments ["extra"]: it takes flags only`},
		{[]string{"serve", "--", "-check-config"}, `serve: unexpected arguments ["-check-config"]: it takes flags only`},
		{[]string{"ca", "init", "x", "-cert", "c", "-key", "k"}, `ca init: unexpected arguments ["x"]: it takes flags only`},
		{[]string{"keys", "directory", "x", "-o", dir}, `keys directory: unexpected arguments ["x"]: it takes flags only`},
		{[]string{"hash-password", "x", "-cost", "4"}, `hash-password: unexpected arguments ["x"]: it takes flags only`},
		{[]string{"healthcheck", "x", "-timeout", "1s"}, `healthcheck: unexpected arguments ["x"]: it takes flags only`},
		{[]string{"version", "x"}, `version: unexpected arguments ["x"]: it takes flags only`},
	}
	for _, tt := range refused {
		var printed bytes.Buffer
		code := exitCode(run(context.Background(), tt.args, strings.NewReader("pw\n"), &bytes.Buffer{}, &bytes.Buffer{}), &printed)
		if code != 2 || !strings.Contains(printed.String(), tt.want) {
			t.Errorf("run(%q): exit %d, %q; want 2 and %q", tt.args, code, printed.String(), tt.want)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
