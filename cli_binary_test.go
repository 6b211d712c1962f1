package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// built is the robotsproxy binary the tests of the real binary share, made
// once by a plain "go build" (as the README says) into buildDir, which
// TestMain removes (removeShared).
var (
	buildOnce sync.Once
	buildDir  string
	built     string
	buildErr  error
)

// removeShared removes the binary and the repository copy the tests
// shared (TestMain calls it at the end).
func removeShared() {
	for _, dir := range []string{buildDir, copyDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
}

// testBinary returns the path of the binary built from the repository by
// "go build -o DIR/robotsproxy .".
func testBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "robotsproxy-cli-"); buildErr != nil {
			return
		}
		built = filepath.Join(buildDir, "robotsproxy")
		out, err := exec.Command("go", "build", "-o", built, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// binaryResult is how a run of the binary ended.
type binaryResult struct {
	stdout, stderr string
	code           int
}

// runBuilt runs the binary with args in dir and stdin, and returns its
// output and exit code; a run that a signal ended, or that takes longer
// than a minute, fails the test.
func runBuilt(t *testing.T, dir, stdin string, args ...string) binaryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBinary(t), args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || !ee.Exited()) {
		t.Fatalf("robotsproxy %q: %v; stderr:\n%s", args, err, errb.String())
	}
	return binaryResult{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// noPanic fails the test when the output shows a Go panic or fatal error.
func noPanic(t *testing.T, args []string, r binaryResult) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("robotsproxy %q: stderr shows %q:\n%s", args, s, r.stderr)
		}
	}
}

// TestEveryCommandWithoutArguments runs every command and subcommand with
// no arguments, in an empty directory and with nothing on stdin: each
// prints its usage error (exit 2) or does its documented default (version
// prints the version; healthcheck probes 127.0.0.1:9090/readyz), and none
// panics. serve without arguments is TestReadmeFirstCommand's subject.
func TestEveryCommandWithoutArguments(t *testing.T) {
	tests := []struct {
		args  []string
		codes []int  // accepted exit codes
		want  string // in stdout or stderr
	}{
		{[]string{"check"}, []int{2}, "want ROBOTS_FILE USER_AGENT URL..."},
		{[]string{"ca"}, []int{2}, `want "ca init -cert FILE -key FILE"`},
		{[]string{"ca", "init"}, []int{2}, "ca init: want -cert FILE -key FILE"},
		{[]string{"ca", "show"}, []int{2}, "serve creates it there on its first start"},
		{[]string{"keys"}, []int{2}, `keys: want "keys init DIR" or "keys directory -o DIR"`},
		{[]string{"keys", "init"}, []int{2}, "keys init: want one DIR"},
		{[]string{"keys", "directory"}, []int{2}, "keys directory: want -o DIR"},
		{[]string{"hash-password"}, []int{2}, "hash-password: want the password on stdin"},
		{[]string{"audit"}, []int{2}, "audit: want a subcommand (report, verify, show)"},
		{[]string{"audit", "report"}, []int{2}, "audit report: want at least one LOG"},
		{[]string{"audit", "verify"}, []int{2}, "audit verify: want at least one LOG"},
		{[]string{"audit", "show"}, []int{2}, "audit show: want one SHA"},
		{[]string{"audit", "access-log"}, []int{2}, "audit access-log: want at least one LOG"},
		// 0 when something answers on the default admin address, 1 when not.
		{[]string{"healthcheck"}, []int{0, 1}, "http://127.0.0.1:9090/readyz"},
		{[]string{"version"}, []int{0}, "robotsproxy " + strings.TrimSpace(versionFile)},
		{nil, []int{0}, "commands:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{"robotsproxy"}, tt.args...), " "), func(t *testing.T) {
			r := runBuilt(t, t.TempDir(), "", tt.args...)
			noPanic(t, tt.args, r)
			ok := false
			for _, c := range tt.codes {
				ok = ok || r.code == c
			}
			if !ok {
				t.Errorf("robotsproxy %q: exit code %d, want one of %v; stderr:\n%s", tt.args, r.code, tt.codes, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("robotsproxy %q: got stdout %q, stderr %q; want %q in them", tt.args, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
