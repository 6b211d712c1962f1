package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/accesslog"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// AuditAccessLog is "robotsproxy audit access-log": it judges web server
// access logs against the site's robots.txt history. Exit 0 when the logs
// were read (whatever was found; warnings go to stderr too), 2 on usage
// and I/O errors, a log most of whose first lines are not in the chosen
// format, and an -ip-ranges token neither known nor in the logs.
var AuditAccessLog = Command{
	Name:    "audit access-log",
	Summary: "judge a web server's access logs against the site's robots.txt history",
	Usage: "audit access-log [-log-format combined|json] [-json-fields NAME=KEY,...] [-robots PATH] [-ip-ranges auto|TOKEN=FILE]... [-config FILE] [-data-dir DIR] [-allow-private] " +
		"[-dns ADDR] [-dns-domain TOKEN=DOMAIN]... [-format text|json|csv|html] [-table findings|crawlers] [-o PATH] [-top N] LOG...",
	run: runAuditAccessLog,
}

func runAuditAccessLog(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Judge a web server's access logs against the robots.txt in force when each
request was made: violations (every version the crawler could have been
using disallows the request), disputable requests (only some do) and
impostors (a crawler's name from an address outside its published ranges).
LOG is an access log file, gzipped or not; - is stdin.`, stdio.Stderr)
	logFormat := fs.String("log-format", "combined", "access log `FORMAT`: combined (nginx and Apache default, also common) or json (one JSON object a line)")
	fields := fs.String("json-fields", "", "for -log-format json, the field names as `NAME=KEY,...`; NAME is one of "+strings.Join(accesslog.JSONFieldNames(), ", "))
	robotsPath := fs.String("robots", "", "the site's robots.txt history, `PATH`: a file (in force throughout), a directory of versions named by the UTC time they came into force (2026-11-20T00:00:00Z.txt, - allowed for :), git:REPO_DIR:PATH, or archive:ARCHIVE_DIR:ROBOTS_URL (the proxy's robots.txt archive)")
	var rangeSpecs []string
	fs.Func("ip-ranges", "the published IP ranges of product token TOKEN, as `TOKEN=FILE` (or TOKEN=URL, fetched) in Google's format, JAFAR or a plain list; or auto: every copy ipranges update stored in the data directory, each for the tokens it covers (repeatable; TOKEN=... wins over auto for TOKEN)", func(s string) error {
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
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 0:
		return usageErr("audit access-log: want at least one LOG (a file, or - for stdin)\n%s", cmd.usage())
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
	hist, err := accesslog.LoadHistory(ctx, *robotsPath)
	if err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: -robots: %w", err)}
	}
	v := &accesslog.Verifier{Domains: domains}
	ro := accesslog.RangesOptions{Fetcher: access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: *allowPrivate}, UserAgent: "robotsproxy"})}
	if slices.Contains(rangeSpecs, accesslog.RangesAuto) {
		if ro.DataDir, err = dataDirOf(fs, *dataDir, *cfgFile); err != nil {
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
		if err := aud.ReadFile(ctx, name, stdio.Stdin); err != nil {
			return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
		}
	}
	res := aud.Result(*top)
	if err := accesslog.CheckGivenTokens(given, res, accesslog.KnownTokens()); err != nil {
		return usageErr("audit access-log: %v", err)
	}
	for _, w := range res.Summary.Warnings {
		fmt.Fprintf(stdio.Stderr, "robotsproxy: warning: %s\n", w.Message)
	}
	render := func(w io.Writer) error { return accesslog.Render(w, res, *format) }
	if *format == "csv" {
		render = func(w io.Writer) error { return accesslog.RenderCSV(w, res, *table) }
	}
	if err := writeAtomic(*out, stdio.Stdout, render); err != nil {
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
