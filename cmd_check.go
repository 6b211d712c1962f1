package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

const checkSynopsis = "check [-json] [-rfc] [-usage PURPOSE] [-license FILE] ROBOTS_FILE USER_AGENT URL..."

// runCheck implements "robotsproxy check": exit 0 when every URL is
// allowed, 1 when one is disallowed, 2 on usage and I/O errors.
func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", checkSynopsis, `Decide each URL for the crawler USER_AGENT (a product token or a whole
User-Agent header) against the robots.txt file ROBOTS_FILE, offline. Each URL
is an absolute http or https URL, a path starting with "/", or "-" to read
URLs from stdin, one a line. Flags come before ROBOTS_FILE.`, stderr)
	asJSON := fs.Bool("json", false, "write one JSON object per URL")
	purpose := fs.String("usage", "", "write the usage preference for `PURPOSE` (train-ai, search, ai-input...) that applies to each URL")
	lic := fs.String("license", "", "decide each URL against the RSL license in `FILE` (a copy of the one robots.txt's License line names), shown by -json")
	rfc := fs.Bool("rfc", false, "decide each path as sent only (plain RFC 9309), not also as origins may resolve it as the proxy does")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs.Args()); err != nil {
		fs.Usage()
		return usageErr("check: %v", err)
	}
	all, err := check.Run(fs.Arg(0), fs.Arg(1), fs.Args()[2:], check.Options{JSON: *asJSON, Usage: *purpose, RFC: *rfc, License: *lic,
		Stdin: stdin, Stdout: stdout})
	switch {
	case err != nil:
		return &exitError{2, fmt.Errorf("check: %w", err)}
	case !all:
		return errDisallowed
	}
	return nil
}

// checkArgs validates check's arguments ROBOTS_FILE USER_AGENT URL...
// before anything is read: a flag after them (Go's flag package stops at
// the first argument), a USER_AGENT that is a URL (the arguments in the
// wrong order) and a URL that is neither an absolute http(s) URL, a path
// nor "-" are errors.
func checkArgs(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("want ROBOTS_FILE USER_AGENT URL...")
	}
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			return fmt.Errorf("flag %s after the arguments: flags come before ROBOTS_FILE", a)
		}
	}
	if looksLikeURL(args[1]) {
		return fmt.Errorf("USER_AGENT %q is a URL: the order is ROBOTS_FILE USER_AGENT URL...", args[1])
	}
	for _, u := range args[2:] {
		if err := checkURL(u); err != nil {
			return err
		}
	}
	return nil
}

// looksLikeURL reports whether s has a scheme and an authority, as
// "https://x.org/" has and no User-Agent header does.
func looksLikeURL(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], " /;()")
}

// checkURL accepts an absolute http or https URL with a host, a path
// starting with "/", and "-".
func checkURL(s string) error {
	if s == "-" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("URL %q: %v", s, err)
	}
	switch {
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
		return nil // a path
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("URL %q: want an absolute http or https URL (https://example.org/path) or a path (/path)", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("URL %q: no host", s)
	}
	return nil
}
