package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/build"
)

// TestVersionOfAPlainBuild: a binary built with a plain "go build" (no
// -ldflags) prints the VERSION file's version, and the commit of its VCS
// stamp, or "unknown" when it has none (-buildvcs=false, as GOFLAGS may
// say, or a checkout Go does not stamp).
func TestVersionOfAPlainBuild(t *testing.T) {
	bin := testBinary(t)
	raw, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	rev := build.Revision(info.Settings)
	if rev == "" {
		rev = "unknown"
	}
	r := runBuilt(t, "", "", "version")
	want := "robotsproxy " + strings.TrimSpace(string(raw)) + "\ncommit " + rev + "\ngo " + info.GoVersion + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("version: exit %d, printed %q; want 0 and %q", r.code, r.stdout, want)
	}
}

// TestVersionOfAStampedBuild builds the copy of the repository (repoCopy)
// committed to a fresh git repository, with VCS stamping on: version
// prints that commit.
func TestVersionOfAStampedBuild(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED: needs git on PATH (CI installs it)")
	}
	if testing.Short() {
		t.Skip("SKIPPED in -short: builds a copy of the repository")
	}
	dir := repoCopy(t)
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		git("init", "-q")
	}
	git("add", "-A")
	git("commit", "-q", "-m", "copy")
	head := git("rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "robotsproxy")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "\ncommit " + head + "\n"; !strings.Contains(string(out), want) {
		t.Errorf("version of a build stamped at %s: got %q, want it to contain %q", head, out, want)
	}
}

// repoCopy returns a copy of the repository's files (tracked, and new
// files git does not ignore; no .git), as a fresh clone of this working
// tree would hold them: one copy for the test run, made at the first call
// and removed by TestMain, so that the tests that build in it (the
// README's commands) compile its packages once.
func repoCopy(t *testing.T) string {
	t.Helper()
	copyOnce.Do(func() { copyDir, copyErr = copyRepo() })
	if copyErr != nil {
		t.Fatal(copyErr)
	}
	return copyDir
}

var (
	copyOnce sync.Once
	copyDir  string
	copyErr  error
)

func copyRepo() (string, error) {
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("list the repository's files (git ls-files): %w", err)
	}
	dir, err := os.MkdirTemp("", "robotsproxy-repo-")
	if err != nil {
		return "", err
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		body, err := os.ReadFile(name)
		if err != nil {
			return dir, err
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(dst, body, fi.Mode().Perm()); err != nil {
			return dir, err
		}
	}
	return dir, nil
}
