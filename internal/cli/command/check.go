package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

// Check is "robotsproxy check": exit 0 when every URL is allowed, 1 when
// one is disallowed, 2 on usage and I/O errors.
var Check = Command{
	Name:    "check",
	Summary: "decide URLs against a robots.txt file, offline",
	Usage:   "check [-json] [-rfc] [-usage PURPOSE] [-license FILE] ROBOTS_FILE USER_AGENT URL...",
	run:     runCheck,
}

// errDisallowed is check's "at least one URL disallowed" outcome.
var errDisallowed = &exitError{1, errors.New("")}

func runCheck(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Decide each URL for the crawler USER_AGENT (a product token or a whole
User-Agent header) against the robots.txt file ROBOTS_FILE, offline. Each URL
is an absolute http or https URL, a path starting with "/", or "-" to read
URLs from stdin, one a line (a line that is neither URL nor path is an
error: exit 2, naming the line). Flags may come anywhere; "--" ends them.`, stdio.Stderr)
	asJSON := fs.Bool("json", false, "write one JSON object per URL")
	purpose := fs.String("usage", "", "write the usage preference for `PURPOSE` (train-ai, search, ai-input...) that applies to each URL")
	lic := fs.String("license", "", "decide each URL against the RSL license in `FILE` (a copy of the one robots.txt's License line names), shown by -json")
	rfc := fs.Bool("rfc", false, "decide each path as sent only (plain RFC 9309), not also as origins may resolve it as the proxy does")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := checkArgs(fs.Args()); err != nil {
		fs.Usage()
		return usageErr("check: %v", err)
	}
	all, err := check.Run(fs.Arg(0), fs.Arg(1), fs.Args()[2:], check.Options{JSON: *asJSON, Usage: *purpose, RFC: *rfc, License: *lic,
		Stdin: stdio.Stdin, Stdout: stdio.Stdout, Warn: stdio.Stderr})
	switch {
	case err != nil:
		return &exitError{2, fmt.Errorf("check: %w", err)}
	case !all:
		return errDisallowed
	}
	return nil
}

// checkArgs validates check's arguments ROBOTS_FILE USER_AGENT URL...
// before anything is read: a USER_AGENT that is a URL (the arguments in
// the wrong order) and a URL that check.ValidURL refuses are errors.
func checkArgs(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("want ROBOTS_FILE USER_AGENT URL...")
	}
	if looksLikeURL(args[1]) {
		return fmt.Errorf("USER_AGENT %q is a URL: the order is ROBOTS_FILE USER_AGENT URL...", args[1])
	}
	for _, u := range args[2:] {
		if err := check.ValidURL(u); err != nil {
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
