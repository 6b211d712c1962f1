package command

import (
	"bufio"
	"context"
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/audit"
)

// AuditShow is "robotsproxy audit show": the archived robots.txt body with
// a SHA-256 (or a unique prefix of 8 or more hex digits) and its fetch
// records.
var AuditShow = Command{
	Name:    "audit show",
	Summary: "print an archived robots.txt body and its fetch records",
	Usage:   "audit show [-archive DIR] [-config FILE] [-body] SHA",
	run:     runAuditShow,
}

func runAuditShow(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Print the archived robots.txt body whose SHA-256 (or a unique prefix of 8 or
more hex digits) is SHA, and its fetch records.`, stdio.Stderr)
	archive := fs.String("archive", "", "robots.txt archive `DIR` (default: audit.archive_dir of -config)")
	cfgPath := fs.String("config", defaultConfig, "configuration `FILE` that names the archive when -archive is not given")
	bodyOnly := fs.Bool("body", false, "print the body's octets only")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("audit show: want one SHA (a robots_sha256 of the audit log)\n%s", cmd.usage())
	}
	dir, err := archiveDir(fs, *archive, *cfgPath)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit show: %w", err)}
	}
	if dir == "" {
		return usageErr("audit show: no archive: give -archive DIR, or set audit.archive_dir")
	}
	out := bufio.NewWriter(stdio.Stdout)
	err = audit.Show(out, dir, fs.Arg(0), audit.ShowOptions{BodyOnly: *bodyOnly})
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return &exitError{2, fmt.Errorf("audit show: %w", err)}
	}
	return nil
}
