package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit/report"
)

// AuditReport is "robotsproxy audit report": the audit logs summarised, as
// text, json, csv or html. Exit 0 whatever the chain check finds (the
// report says so), 2 on usage and I/O errors.
var AuditReport = Command{
	Name:    "audit report",
	Summary: "summarise audit logs as text, json, csv or html",
	Usage: "audit report [-format text|json|csv|html] [-o PATH] [-table NAME] [-since TIME] [-until TIME] [-token T] [-host SITE] [-top N] " +
		"[-verify=false] [-checkpoints FILE [-checkpoint-key FILE]] [-head SHA] LOG...",
	run: runAuditReport,
}

func runAuditReport(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	now := time.Now
	fs := cmd.flagSet(`Summarise audit logs: decisions by reason, product token and site, over time,
with whether their hash chain holds. LOG is an audit log file, rotated or
gzipped; - is stdin (read once: its chain is not checked).`, stdio.Stderr)
	format := fs.String("format", "text", "output `FORMAT`: "+strings.Join(report.Formats(), ", "))
	out := fs.String("o", "", "write the report to `PATH` instead of stdout: a file, or with -format csv a directory that gets one NAME.csv a table")
	tableName := fs.String("table", "", "with -format csv, write only the table `NAME` ("+strings.Join(report.TableNames(), ", ")+"), to stdout or -o FILE")
	since := fs.String("since", "", "only lines at or after `TIME` (RFC 3339, YYYY-MM-DD, or a duration such as 24h: that long ago)")
	until := fs.String("until", "", "only lines before `TIME` (same forms as -since)")
	token := fs.String("token", "", "only lines of product `TOKEN`")
	host := fs.String("host", "", "only lines for `SITE`: scheme://host:port (that origin), host:port (any scheme) or host (every scheme and port)")
	verify := fs.Bool("verify", true, "check the logs' hash chain as audit verify -chain-only does, alongside the report (about twice the CPU; -verify=false skips it and the report says so)")
	checkpoints := fs.String("checkpoints", "", "checkpoint log `FILE` (audit.checkpoint_file) the chain must pass through, as for audit verify")
	ckKey := fs.String("checkpoint-key", "", "`FILE` holding the checkpoints' HMAC key, as for audit verify")
	head := fs.String("head", "", "the chain must end exactly at this head, `SHA` (64 hex digits, kept elsewhere)")
	top := fs.Int("top", -1, "rows shown per table, `N`; 0 shows every tracked row (default 50 for text and html, all for json and csv)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("audit report: want at least one LOG (a file, or - for stdin)\n%s", cmd.usage())
	}
	if !slices.Contains(report.Formats(), *format) {
		return usageErr("audit report: -format %q: want one of %s", *format, strings.Join(report.Formats(), ", "))
	}
	if *tableName != "" && (*format != "csv" || !report.IsTable(*tableName)) {
		return usageErr("audit report: -table %q: want -format csv and one of %s", *tableName, strings.Join(report.TableNames(), ", "))
	}
	if *format == "csv" && *tableName == "" && *out != "" {
		if err := checkCSVDir(*out); err != nil {
			return err
		}
	}
	o := report.Options{Token: *token, Host: *host, Top: *top, Stdin: stdio.Stdin, Now: now}
	if o.Top < 0 {
		o.Top = 0
		if *format == "text" || *format == "html" {
			o.Top = 50
		}
	}
	anchors, err := verifyAnchors(*checkpoints, *ckKey, *head)
	if err != nil {
		return usageErr("audit report: %v", err)
	}
	if *verify {
		o.Verify = &report.ChainCheck{Checkpoints: anchors.Checkpoints, Head: anchors.Head}
	} else if *checkpoints != "" || *head != "" {
		return usageErr("audit report: -checkpoints and -head need the chain check: drop -verify=false")
	}
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
	if msg := rep.NoMatch(); msg != "" {
		fmt.Fprintln(stdio.Stderr, "audit report: "+msg)
	}
	if rep.Integrity.Status == report.IntegrityFailed {
		fmt.Fprintln(stdio.Stderr, "audit report: the hash chain does not verify (the report says so): "+rep.Integrity.Reason)
	}
	switch {
	case *tableName != "":
		return writeReport(*out, stdio.Stdout, func(w io.Writer) error { return report.WriteCSVTable(w, rep, *tableName) })
	case *format == "csv" && *out != "":
		return writeCSVDir(*out, rep)
	}
	return writeReport(*out, stdio.Stdout, func(w io.Writer) error { return report.Render(w, rep, *format) })
}

// checkCSVDir refuses a -format csv -o DIR that cannot be the directory,
// before the logs are read.
func checkCSVDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return &exitError{2, fmt.Errorf("audit report: -format csv -o %s: not a directory; -o names a directory for one CSV file a table (-table NAME -o FILE writes one table)", dir)}
	} else if err != nil && strings.HasSuffix(dir, ".csv") {
		return usageErr("audit report: -format csv -o %s: -o names a directory for one CSV file a table; for one table in a file, add -table NAME", dir)
	}
	return nil
}

// writeCSVDir writes -format csv -o DIR: one NAME.csv a table, each
// whole or not at all, creating DIR (and its parents) when missing.
func writeCSVDir(dir string, rep *report.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &exitError{2, fmt.Errorf("audit report: %w", err)}
	}
	for _, name := range report.TableNames() {
		err := writeReport(filepath.Join(dir, name+".csv"), nil, func(w io.Writer) error { return report.WriteCSVTable(w, rep, name) })
		if err != nil {
			return err
		}
	}
	return nil
}

// writeReport writes the report with write to path (stdout when empty). A
// file is written whole or not at all: to a temporary name, renamed at the
// end.
func writeReport(path string, stdout io.Writer, write func(io.Writer) error) error {
	if err := writeAtomic(path, stdout, write); err != nil {
		return &exitError{2, fmt.Errorf("audit report: %w", err)}
	}
	return nil
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
