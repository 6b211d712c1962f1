package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCheckStdinRefusesWhatArgumentsRefuse: a line of stdin that is not
// a URL check decides is refused as it is on the command line (exit 2),
// the message naming the line's number and text; the lines before it are
// decided.
func TestRunCheckStdinRefusesWhatArgumentsRefuse(t *testing.T) {
	robots := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stdin string
		bad         string   // the refused line
		want        []string // in what exitCode prints
		decided     int      // lines written to stdout
	}{
		{"relative path", "https://x.org/a\n\naction/x\n/b\n", "action/x", []string{`stdin line 3: URL "action/x": want an absolute http or https URL`}, 1},
		{"not a url", "not a url\n", "not a url", []string{`stdin line 1: URL "not a url"`}, 0},
		{"other scheme", "/a\nftp://x.org/action/x\n", "ftp://x.org/action/x", []string{`stdin line 2: URL "ftp://x.org/action/x"`}, 1},
		{"no host", "https:///action/x\r\n", "https:///action/x", []string{`stdin line 1: URL "https:///action/x": no host`}, 0},
		{"dash", "-\n", "", []string{`stdin line 1: URL "-"`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, printed bytes.Buffer
			args := []string{"check", robots, "ExampleBot", "-"}
			code := exitCode(run(context.Background(), args, strings.NewReader(tt.stdin), &stdout, &bytes.Buffer{}), &printed)
			if code != 2 {
				t.Errorf("check - with stdin %q: got exit code %d, want 2", tt.stdin, code)
			}
			for _, w := range tt.want {
				if !strings.Contains(printed.String(), w) {
					t.Errorf("check - with stdin %q: got %q, want it to contain %q", tt.stdin, printed.String(), w)
				}
			}
			if n := strings.Count(stdout.String(), "\n"); n != tt.decided {
				t.Errorf("check - with stdin %q: got %d decisions %q, want %d", tt.stdin, n, stdout.String(), tt.decided)
			}
			if tt.bad == "" {
				return
			}
			// The same value as an argument is a usage error too.
			argCode := exitCode(run(context.Background(), []string{"check", robots, "ExampleBot", tt.bad}, nil, &bytes.Buffer{}, &bytes.Buffer{}), &bytes.Buffer{})
			if argCode != 2 {
				t.Errorf("check with the argument %q: got exit code %d, want 2 as from stdin", tt.bad, argCode)
			}
		})
	}
}

// TestRunCheckWarnsNotText: a robots.txt that is not text (real bodies a
// site served: gzip-compressed, UTF-16) is decided as written, and a
// warning on stderr names what it is; a text file gets none.
func TestRunCheckWarnsNotText(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{filepath.Join("..", "..", "testdata", "robots-odd", "schema.org.txt"), "is not text (gzip-compressed data)"},
		{filepath.Join("..", "..", "testdata", "robots-odd", "reddbarna.no.txt"), "is not text (UTF-16 text (little-endian), not UTF-8)"},
		{filepath.Join("..", "..", "testdata", "robots", "dl.acm.org.txt"), ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"check", tt.file, "ExampleBot", "/docs/search_results.html"}, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "ALLOWED ") {
			t.Errorf("%s: exit %d, stdout %q", tt.file, code, stdout.String())
		}
		if got := stderr.String(); tt.want == "" && got != "" || !strings.Contains(got, tt.want) || tt.want != "" && !strings.Contains(got, "warning: "+tt.file) {
			t.Errorf("%s: stderr %q, want %q", tt.file, got, tt.want)
		}
	}
}
