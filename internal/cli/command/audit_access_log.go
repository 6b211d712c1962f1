package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/accesslog"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// AuditAccessLog is "robotsproxy audit access-log": it judges web server
// access logs against the site's robots.txt history. Exit 0 when the logs
// were read (whatever was found), 2 on usage and I/O errors.
var AuditAccessLog = Command{
	Name:    "audit access-log",
	Summary: "judge a web server's access logs against the site's robots.txt history",
	Usage: "audit access-log [-log-format combined|json] [-json-fields NAME=KEY,...] [-robots PATH] [-ip-ranges TOKEN=FILE]... [-allow-private] " +
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
	fs.Func("ip-ranges", "the published IP ranges of product token TOKEN, as `TOKEN=FILE` (or TOKEN=URL, fetched): a JSON file in the shape Google, Bing and OpenAI publish (repeatable)", func(s string) error {
		if tok, src, ok := strings.Cut(s, "="); !ok || tok == "" || src == "" {
			return fmt.Errorf("want TOKEN=FILE or TOKEN=URL")
		}
		rangeSpecs = append(rangeSpecs, s)
		return nil
	})
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
	ranges := map[string][]netip.Prefix{}
	var fetcher *access.Fetcher
	for _, spec := range rangeSpecs {
		if fetcher == nil && isURL(spec) {
			fetcher = access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: *allowPrivate}, UserAgent: "robotsproxy"})
		}
		if err := addRanges(ctx, ranges, spec, fetcher); err != nil {
			return &exitError{2, fmt.Errorf("audit access-log: -ip-ranges %s: %w", spec, err)}
		}
	}
	v := &accesslog.Verifier{Ranges: ranges, Domains: domains}
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
	render := func(w io.Writer) error { return accesslog.Render(w, res, *format) }
	if *format == "csv" {
		render = func(w io.Writer) error { return accesslog.RenderCSV(w, res, *table) }
	}
	if err := writeAtomic(*out, stdio.Stdout, render); err != nil {
		return &exitError{2, fmt.Errorf("audit access-log: %w", err)}
	}
	return nil
}

// isURL reports whether an -ip-ranges TOKEN=SOURCE names a URL.
func isURL(spec string) bool {
	_, src, _ := strings.Cut(spec, "=")
	return strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://")
}

// addRanges reads -ip-ranges TOKEN=FILE, or TOKEN=URL with fetcher, into
// ranges.
func addRanges(ctx context.Context, ranges map[string][]netip.Prefix, spec string, fetcher *access.Fetcher) error {
	tok, src, _ := strings.Cut(spec, "=")
	var p []netip.Prefix
	if isURL(spec) {
		var err error
		if p, err = accesslog.FetchRanges(ctx, fetcher, src); err != nil {
			return err
		}
	} else {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if p, err = accesslog.ParseRanges(b); err != nil {
			return err
		}
	}
	t := strings.ToLower(tok)
	ranges[t] = append(ranges[t], p...)
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
