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

// plainCases are URLs of the plain forms and near misses of them.
var plainCases = []string{
	"/", "/a", "/a?b#c", "/%41", "/%4", "/%zz", "//x/a", "/a\x7f", "/a b", "/a\\b", "/é",
	"https://x.org", "https://x.org/", "http://x.org:8080/a?q=%2F#f", "https://x.org:/a", "https://x.org?a/b",
	"https://x.org#/a", "https://x_y~z.org/", "https://x.org:80:90/", "https://x.org\\a", "https://:80/",
	"https:///a", "https://u@x.org/", "https://[::1]/", "https://x.org/%", "https://x.org/%2", "https://x.org/%2g",
	"HTTPS://x.org/", "ftp://x.org/", "https:x.org", "https://x.org/\x01", "https://.", "-", "",
}

// TestPlainURLIsValid: what plainURL accepts, the url.Parse rule
// (parsedURL) accepts; and ValidURL answers as parsedURL does.
func TestPlainURLIsValid(t *testing.T) {
	plain := 0
	for _, s := range plainCases {
		if plainURL(s) {
			plain++
			if err := parsedURL(s); err != nil {
				t.Errorf("plainURL(%q) is true, but parsedURL refuses it: %v", s, err)
			}
		}
		if (ValidURL(s) == nil) != (s == "-" || parsedURL(s) == nil) {
			t.Errorf("ValidURL(%q) = %v, parsedURL: %v", s, ValidURL(s), parsedURL(s))
		}
	}
	if plain < 10 {
		t.Errorf("plainURL accepts %d of the cases, want the plain ones (at least 10)", plain)
	}
	if n := testing.AllocsPerRun(100, func() { _ = ValidURL("https://www.example.org/a/b?c=%2F") }); n != 0 {
		t.Errorf("ValidURL of a plain URL allocates %v times, want 0", n)
	}
}

// FuzzPlainURLIsValid: plainURL accepts nothing that parsedURL refuses.
func FuzzPlainURLIsValid(f *testing.F) {
	for _, s := range plainCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if plainURL(s) {
			if err := parsedURL(s); err != nil {
				t.Fatalf("plainURL(%q) is true, but parsedURL refuses it: %v", s, err)
			}
		}
	})
}
