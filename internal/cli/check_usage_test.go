package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCheckUsage checks the wiring of check's -usage flag: the purpose
// reaches the output, and a purpose that is not a label is a usage error.
func TestRunCheckUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte("User-agent: *\nContent-Usage: /a train-ai=n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"check", "-usage", "train-ai", path, "AnyBot", "http://example.com/a"}, nil, &stdout, io.Discard)
	if code := exitCode(err, io.Discard); code != 0 {
		t.Fatalf("check -usage train-ai: got exit code %d (error %v), want 0", code, err)
	}
	if want := "\tusage train-ai=n: line 2: Content-Usage: /a train-ai=n\n"; !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("check -usage train-ai: got %q, want it to end with %q", stdout.String(), want)
	}
	err = run(context.Background(), []string{"check", "-usage", "Train", path, "AnyBot", "/"}, nil, io.Discard, io.Discard)
	var msg bytes.Buffer
	if code := exitCode(err, &msg); code != 2 || !strings.Contains(msg.String(), "-usage") {
		t.Errorf("check -usage Train: got exit code %d, message %q; want 2 naming -usage", code, msg.String())
	}
}
