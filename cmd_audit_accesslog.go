package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/accesslog"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

const accessLogSynopsis = "audit access-log [-log-format combined|json] [-robots PATH] [-ip-ranges auto|TOKEN=FILE]... [-data-dir DIR] [-dns ADDR] [-format text|json|csv|html] [-o PATH] LOG..."

// runAuditAccessLog implements "robotsproxy audit access-log": it judges
// web server access logs against the site's robots.txt history. Exit 0
// when the logs were read (whatever was found; warnings go to stderr too),
// 2 on usage and I/O errors, a log most of whose first lines are not in
// the chosen format, and an -ip-ranges token neither known nor in the
// logs.
func runAuditAccessLog(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit access-log", accessLogSynopsis, `Judge a web server's access logs against the robots.txt in force when each
request was made: violations (every version the crawler could have been
using disallows the request), disputable requests (only some do) and
impostors (a crawler's name from an address outside its published ranges).
LOG is an access log file, gzipped or not; - is stdin.`, stderr)
	logFormat := fs.String("log-format", "combined", "access log `FORMAT`: combined (nginx and Apache default, also common) or json (one JSON object a line)")
	fields := fs.String("json-fields", "", "for -log-format json, the field names as `NAME=KEY,...`; NAME is one of "+strings.Join(accesslog.JSONFieldNames(), ", "))
	robotsPath := fs.String("robots", "", "the site's robots.txt history, `PATH`: a file (in force throughout), a directory of versions named by the UTC time they came into force (2026-11-20T00:00:00Z.txt, - allowed for :), git:REPO_DIR:PATH, or archive:ARCHIVE_DIR:ROBOTS_URL (the proxy's robots.txt archive)")
	var rangeSpecs []string
	fs.Func("ip-ranges", "the published IP ranges claimed crawlers are checked against, `auto|TOKEN=FILE`: auto takes every copy ipranges update stored in the data directory; TOKEN=FILE (or TOKEN=URL, fetched) gives product token TOKEN's, in Google's format, JAFAR or a plain list (repeatable; TOKEN=... wins over auto for TOKEN)", func(s string) error {
		if tok, src, ok := strings.Cut(s, "="); s != accesslog.RangesAuto && (!ok || tok == "" || src == "") {
			return fmt.Errorf("want auto, TOKEN=FILE or TOKEN=URL")
		}
		rangeSpecs = append(rangeSpecs, s)
		return nil
	})
	cfgFile := fs.String("config", defaultConfig, "configuration `FILE`, for its data_dir (-ip-ranges auto)")
	dataDir := fs.String("data-dir", "", "the data `DIR` ipranges update stored the ranges in, for -ip-ranges auto (overrides data_dir)")
	allowPrivate := fs.Bool("allow-private", false, "let -ip-ranges URLs reach loopback and private addresses (refused by default, as the proxy refuses them)")
	domains := accesslog.DefaultDomains()
	fs.Func("dns-domain", "a DNS domain whose hosts run crawler TOKEN, as `TOKEN=DOMAIN`, for -dns (repeatable; adds to the built-in list)", func(s string) error {
		tok, dom, ok := strings.Cut(s, "=")
		if !ok || tok == "" || dom == "" {
			return fmt.Errorf("want TOKEN=DOMAIN")
		}
		t := strings.ToLower(tok)
		domains[t] = append(domains[t], strings.ToLower(strings.Trim(dom, ".")))
		return nil
	})
	dns := fs.String("dns", "", "verify claimed crawlers by forward-confirmed reverse DNS, asking the DNS server at `ADDR` (host:port)")
	format := fs.String("format", "text", "output `FORMAT`: "+strings.Join(accesslog.Formats(), ", "))
	out := fs.String("o", "", "write the report to `PATH` instead of stdout")
	table := fs.String("table", "findings", "for -format csv, the `TABLE` written: findings (a row per violation, disputable request and impostor) or crawlers (a row per product token)")
	top := fs.Int("top", 20, "paths shown per crawler among the most violated, `N`; 0 shows all")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 0:
		return usageErr("audit access-log: want at least one LOG (a file, or - for stdin)\nusage: robotsproxy %s", accessLogSynopsis)
	case *robotsPath == "":
		return usageErr("audit access-log: want -robots PATH (a robots.txt file, a directory of dated versions, git:REPO_DIR:PATH or archive:ARCHIVE_DIR:ROBOTS_URL)")
	case !slices.Contains(accesslog.Formats(), *format):
		return usageErr("audit access-log: -format %q: want one of %s", *format, strings.Join(accesslog.Formats(), ", "))
	}
	if !slices.Contains(accesslog.CSVTables(), *table) || *table != "findings" && *format != "csv" {
		return usageErr("audit access-log: -table %q: want findings or crawlers, with -format csv", *table)
	}
	newParser, err := logParser(*logFormat, *fields)
	if err != nil {
		return usageErr("audit access-log: %v", err)
	}
	// An interrupt or SIGTERM stops the read (the command gets no context
	// from runAudit yet).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hist, err := accesslog.LoadHistory(ctx, *robotsPath)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: -robots: %w", err)}
	}
	v := &accesslog.Verifier{Domains: domains}
	ro := accesslog.RangesOptions{Fetcher: access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: *allowPrivate}, UserAgent: "robotsproxy"})}
	if slices.Contains(rangeSpecs, accesslog.RangesAuto) {
		if ro.DataDir, err = dataDirOf(*cfgFile, isSet(fs, "config"), *dataDir, isSet(fs, "data-dir")); err != nil {
			return &exitError{2, fmt.Errorf("audit access-log: -ip-ranges auto: %w", err)}
		}
	}
	given, err := accesslog.LoadRanges(ctx, v, rangeSpecs, ro)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
	}
	if *dns != "" {
		if v.Resolver, err = dnsResolver(*dns); err != nil {
			return usageErr("audit access-log: -dns: %v", err)
		}
	}
	aud, err := accesslog.New(accesslog.Options{History: hist, Verifier: v, NewParser: newParser})
	if err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
	}
	defer aud.Close()
	for _, name := range fs.Args() {
		if err := aud.ReadFile(ctx, name, stdin); err != nil {
			return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
		}
	}
	res := aud.Result(*top)
	if err := accesslog.CheckGivenTokens(given, res, accesslog.KnownTokens()); err != nil {
		return usageErr("audit access-log: %v", err)
	}
	for _, w := range res.Summary.Warnings {
		fmt.Fprintf(stderr, "robotsproxy: warning: %s\n", w.Message)
	}
	render := func(w io.Writer) error { return accesslog.Render(w, res, *format) }
	if *format == "csv" {
		render = func(w io.Writer) error { return accesslog.RenderCSV(w, res, *table) }
	}
	if err := writeAtomic(*out, stdout, render); err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
	}
	return nil
}

// logParser returns the parser of -log-format.
func logParser(format, fields string) (func() accesslog.Parser, error) {
	switch format {
	case "combined", "common":
		if fields != "" {
			return nil, errors.New("-json-fields: only with -log-format json")
		}
		return func() accesslog.Parser { return &accesslog.Combined{} }, nil
	case "json":
		f, err := accesslog.ParseJSONFields(fields)
		if err != nil {
			return nil, fmt.Errorf("-json-fields: %w", err)
		}
		return func() accesslog.Parser { return accesslog.NewJSONParser(f) }, nil
	}
	return nil, fmt.Errorf("-log-format %q: want combined or json", format)
}

// dataDirOf returns the data directory: -data-dir when set, else the
// configuration's data_dir or its default.
func dataDirOf(cfgFile string, cfgSet bool, dataDir string, dataDirSet bool) (string, error) {
	if dataDirSet {
		return dataDir, nil
	}
	cfg, _, err := loadConfig(cfgFile, cfgSet, zerolog.Nop())
	if err != nil {
		return "", err
	}
	return cfg.ResolveDataDir(os.Getenv)
}

// dnsResolver returns a resolver that asks only the DNS server at addr.
func dnsResolver(addr string) (*net.Resolver, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("%q: want HOST:PORT (127.0.0.1:53)", addr)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}, nil
}

// writeAtomic writes what render writes to path, stdout when empty. A
// file is written whole or not at all: to a temporary name, renamed at
// the end.
func writeAtomic(path string, stdout io.Writer, render func(io.Writer) error) error {
	if path == "" {
		bw := bufio.NewWriter(stdout)
		return errors.Join(render(bw), bw.Flush())
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("-o %s: not a regular file (%s); name a file to create or replace", path, fileKind(fi.Mode()))
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = errors.Join(render(bw), bw.Flush(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
