package check

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzStdinRefusesWhatValidURLRefuses: a URL read from stdin is decided
// exactly when ValidURL accepts it as an argument (and it is not "-"),
// and refused with a *LineError naming line 1 otherwise; an accepted URL
// that is not a path has an http(s) scheme and a host.
func FuzzStdinRefusesWhatValidURLRefuses(f *testing.F) {
	for _, s := range []string{"https://x.org/a", "/a", "action/x", "not a url", "-", "ftp://x/", "https:///a", "//x/a", "http://[::1", "http://[::1]:8080/c"} {
		f.Add(s)
	}
	robots := filepath.Join(f.TempDir(), "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.Trim(s, asciiSpace)
		if s == "" || strings.ContainsAny(s, "\r\n") {
			return
		}
		argErr := ValidURL(s)
		if argErr == nil && !strings.HasPrefix(s, "/") && s != "-" {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				t.Fatalf("ValidURL(%q) accepts what is not an http(s) URL with a host: %v", s, err)
			}
		}
		var out bytes.Buffer
		_, err := Run(robots, "ExampleBot", []string{"-"}, Options{Stdin: strings.NewReader(s + "\n"), Stdout: &out})
		var le *LineError
		switch {
		case argErr == nil && s != "-":
			if err != nil || out.Len() == 0 {
				t.Fatalf("stdin %q, a valid argument: error %v, output %q; want it decided", s, err, out.String())
			}
		case !errors.As(err, &le) || le.Line != 1 || le.Text != s:
			t.Fatalf("stdin %q, refused as an argument (%v): got %v, want a LineError for line 1", s, argErr, err)
		}
	})
}
