package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/ipranges"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// iprangesHelp is what "robotsproxy ipranges -h" prints.
const iprangesHelp = `usage: robotsproxy ipranges SUBCOMMAND [flags]

subcommands:
  update  fetch the crawler operators' published IP ranges into the data directory
  show    list the stored copies: source, URL, fetch time, creationTime, prefixes

"robotsproxy ipranges SUBCOMMAND -h" prints a subcommand's flags.
`

// runIPRanges dispatches "robotsproxy ipranges SUBCOMMAND".
func runIPRanges(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("ipranges: want a subcommand (update, show)\n%s", iprangesHelp)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, iprangesHelp)
		return nil
	case "update":
		return runIPRangesUpdate(ctx, args[1:], stdout, stderr)
	case "show":
		return runIPRangesShow(args[1:], stdout, stderr)
	}
	return usageErr("ipranges: unknown subcommand %q\n%s", args[0], iprangesHelp)
}

// runIPRangesUpdate implements "robotsproxy ipranges update": exit 0 when
// every source was stored (or is fresh), 1 when one failed (the others
// are stored; a failed one keeps its previous copy), 2 on usage errors.
func runIPRangesUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ipranges update", "ipranges update [-config FILE] [-data-dir DIR] [-source NAME=URL]... [-force] [-allow-private] [NAME...]",
		`Fetch the IP ranges crawler operators publish (Google, Bing, OpenAI,
Perplexity, Apple, Common Crawl, ...) into the data directory, through the
proxy's own fetcher and destination guard, for audit access-log -ip-ranges
auto. Each copy keeps its URL, fetch time, creationTime and prefix count,
and is replaced only once the new file has parsed. NAME limits the update
to those sources (all by default). A source fetched less than an hour ago
is not fetched again (JAFAR asks consumers to poll at most hourly).`, stderr)
	cfgFile := fs.String("config", defaultConfig, "configuration `FILE`, for its data_dir")
	dataDir := fs.String("data-dir", "", "keep the copies in `DIR`/ipranges (overrides data_dir; default $XDG_STATE_HOME/robotsproxy, else ~/.local/state/robotsproxy)")
	urls := map[string]string{}
	fs.Func("source", "fetch source `NAME=URL` from URL instead of where its operator publishes it (a mirror; repeatable)", func(s string) error {
		name, u, ok := strings.Cut(s, "=")
		if !ok || name == "" || !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return fmt.Errorf("want NAME=URL (an http or https URL)")
		}
		urls[name] = u
		return nil
	})
	force := fs.Bool("force", false, "fetch every source, even one fetched less than an hour ago")
	allowPrivate := fs.Bool("allow-private", false, "let sources reach loopback and private addresses (refused by default, as the proxy refuses them)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	srcs, err := ipranges.Select(ipranges.Sources(), fs.Args(), urls)
	if err != nil {
		return usageErr("ipranges update: %v", err)
	}
	dir, err := dataDirOf(*cfgFile, isSet(fs, "config"), *dataDir, isSet(fs, "data-dir"))
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges update: %w", err)}
	}
	f := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: *allowPrivate}, UserAgent: "robotsproxy"})
	outs := ipranges.Update(ctx, srcs, ipranges.UpdateOptions{Fetcher: f, DataDir: dir, Force: *force})
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "source\tresult\tprefixes\tcreationTime\tfetched\tURL\n")
	failed := 0
	for _, o := range outs {
		result := "updated"
		switch {
		case o.Err != nil:
			result, failed = "FAILED", failed+1
		case o.Fresh:
			result = "fresh"
		}
		prefixes, created, fetched := "-", "-", "-"
		if r := o.Record; r != nil {
			prefixes, fetched = fmt.Sprint(r.Prefixes), r.FetchedAt.Format(time.RFC3339)
			if r.CreationTime != nil {
				created = r.CreationTime.Format(time.RFC3339)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Source.Name, result, prefixes, created, fetched, o.Source.URL)
	}
	tw.Flush()
	for _, o := range outs {
		if o.Err != nil {
			fmt.Fprintf(stderr, "robotsproxy: ipranges update: %s: %v (its previous copy, if any, is kept)\n", o.Source.Name, o.Err)
		}
	}
	fmt.Fprintf(stdout, "stored in %s\n", dir)
	if failed > 0 {
		return &exitError{1, fmt.Errorf("ipranges update: %d of %d sources failed", failed, len(outs))}
	}
	return nil
}

// runIPRangesShow implements "robotsproxy ipranges show": the stored
// copies, read and checked as -ip-ranges auto reads them.
func runIPRangesShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ipranges show", "ipranges show [-config FILE] [-data-dir DIR]",
		`List the copies ipranges update stored: each source's file, URL, fetch
time, creationTime, prefix count and product tokens. A copy that does not
match its record or does not parse is an error (exit 2).`, stderr)
	cfgFile := fs.String("config", defaultConfig, "configuration `FILE`, for its data_dir")
	dataDir := fs.String("data-dir", "", "the data `DIR` (overrides data_dir)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	dir, err := dataDirOf(*cfgFile, isSet(fs, "config"), *dataDir, isSet(fs, "data-dir"))
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges show: %w", err)}
	}
	stored, err := ipranges.Load(dir)
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges show: %w", err)}
	}
	if len(stored) == 0 {
		fmt.Fprintf(stdout, "no ranges stored in %s: run robotsproxy ipranges update\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "source\tprefixes\tcreationTime\tfetched\tformat\tproduct tokens\tfile\tURL\n")
	for _, s := range stored {
		created := "-"
		if s.CreationTime != nil {
			created = s.CreationTime.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Prefixes, created, s.FetchedAt.Format(time.RFC3339), s.Format,
			strings.Join(s.Tokens, ","), s.Path, s.URL)
	}
	return tw.Flush()
}
