package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// siteOwnersBlock returns the first ```sh block under "## For site
// owners" in readme.
func siteOwnersBlock(readme string) (string, error) {
	_, section, ok := strings.Cut(readme, "\n## For site owners\n")
	if !ok {
		return "", fmt.Errorf(`no "## For site owners" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return shBlock(section)
}

// TestReadmeSiteOwners runs the README's "For site owners" block as one
// bash script, exactly as written, in a copy of the repository with a
// fresh HOME, and compares its output with what the block's comment lines
// say.
func TestReadmeSiteOwners(t *testing.T) {
	for _, tool := range []string{"bash", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the README's example needs %s on PATH (CI has it)", tool)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := siteOwnersBlock(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	want, checked := expectedOutput(block)
	if checked != 1 || strings.Count(want, "\n") < 3 {
		t.Errorf("the example states %d commands' output (%q), want the report's lines", checked, want)
	}
	script := filepath.Join(t.TempDir(), "siteowners.sh")
	if err := os.WriteFile(script, []byte("set -e\n"+block+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir, cmd.Env = repoCopy(t), userEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("the example exited: %v\n%s", err, stderr.String())
	}
	if got := normalizeOutput(stdout.String()); got != normalizeOutput(want) {
		t.Errorf("the example printed:\n%s\nthe README says:\n%s\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
}
