package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/audit/report"
)

// runAudit dispatches "robotsproxy audit SUBCOMMAND ...": a new
// subcommand is one more case here and a line in usage.
func runAudit(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("audit: want a subcommand (report, verify, show)\n%s", auditHelp)
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, auditHelp)
		return nil
	}
	switch args[0] {
	case "report":
		return runAuditReport(args[1:], stdin, stdout, stderr, time.Now)
	case "verify":
		return runAuditVerify(args[1:], stdout, stderr)
	case "show":
		return runAuditShow(args[1:], stdout, stderr)
	case "access-log":
		return runAuditAccessLog(args[1:], stdin, stdout, stderr)
	}
	return usageErr("audit: unknown subcommand %q\n%s", args[0], auditHelp)
}

// auditHelp is what "robotsproxy audit -h" prints.
const auditHelp = `usage: robotsproxy audit SUBCOMMAND [flags] LOG...

subcommands:
  report  summarise audit logs as text, json, csv or html
  verify  verify the hash chain, and re-decide every decision from the robots.txt archive
  show    print an archived robots.txt body and its fetch records
  access-log  judge a web server's access logs against the site's robots.txt history

"robotsproxy audit SUBCOMMAND -h" prints a subcommand's flags.
`

// runAuditReport implements "robotsproxy audit report [-format F] [-o FILE]
// [-since T] [-until T] [-token T] [-host H] [-top N] LOG...".
func runAuditReport(args []string, stdin io.Reader, stdout, stderr io.Writer, now func() time.Time) error {
	fs := newFlagSet("audit report", "audit report [flags] LOG...", `Summarise audit logs: decisions by reason, product token and host, over time.
LOG is an audit log file, rotated or gzipped; - is stdin.`, stderr)
	format := fs.String("format", "text", "output `FORMAT`: "+strings.Join(report.Formats(), ", "))
	out := fs.String("o", "", "write the report to `FILE` instead of stdout")
	since := fs.String("since", "", "only lines at or after `TIME` (RFC 3339, YYYY-MM-DD, or a duration such as 24h: that long ago)")
	until := fs.String("until", "", "only lines before `TIME` (same forms as -since)")
	token := fs.String("token", "", "only lines of product `TOKEN`")
	host := fs.String("host", "", "only lines for `HOST`")
	top := fs.Int("top", -1, "rows shown per table, `N`; 0 shows every tracked row (default 50 for text and html, all for json and csv)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("audit report: want at least one LOG (a file, or - for stdin)\n%s", usage)
	}
	if !slices.Contains(report.Formats(), *format) {
		return usageErr("audit report: -format %q: want one of %s", *format, strings.Join(report.Formats(), ", "))
	}
	o := report.Options{Token: *token, Host: *host, Top: *top, Stdin: stdin, Now: now}
	if o.Top < 0 {
		o.Top = 0
		if *format == "text" || *format == "html" {
			o.Top = 50
		}
	}
	var err error
	if o.Since, err = parseWhen(*since, now()); err != nil {
		return usageErr("audit report: -since: %v", err)
	}
	if o.Until, err = parseWhen(*until, now()); err != nil {
		return usageErr("audit report: -until: %v", err)
	}
	rep, err := report.Collect(fs.Args(), o)
	if err != nil {
		return &exitError{2, err}
	}
	return writeReport(*out, stdout, rep, *format)
}

// writeReport renders rep to path (stdout when empty). A file is written
// whole or not at all: to a temporary name, renamed at the end.
func writeReport(path string, stdout io.Writer, rep *report.Report, format string) error {
	if path == "" {
		bw := bufio.NewWriter(stdout)
		if err := report.Render(bw, rep, format); err != nil {
			return &exitError{2, fmt.Errorf("audit report: %w", err)}
		}
		if err := bw.Flush(); err != nil {
			return &exitError{2, fmt.Errorf("audit report: %w", err)}
		}
		return nil
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return &exitError{2, fmt.Errorf("audit report: -o %s: not a regular file (%s); name a file to create or replace", path, fileKind(fi.Mode()))}
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit report: %w", err)}
	}
	bw := bufio.NewWriter(f)
	err = report.Render(bw, rep, format)
	err = errors.Join(err, bw.Flush(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return &exitError{2, fmt.Errorf("audit report: %w", err)}
	}
	return nil
}

// fileKind names a file mode's type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// parseWhen reads a -since/-until value: RFC 3339, a date (midnight UTC),
// or a Go duration meaning that long before now. Empty is the zero time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-22T20:10:50Z), a date (2026-11-22) or a duration (24h)", s)
}
