package command

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/ipranges"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// IPRangesUpdate is "robotsproxy ipranges update": the crawler operators'
// published IP ranges fetched into the data directory. Exit 0 when every
// source was stored (or is fresh), 1 when one failed (the others are
// stored; a failed one keeps its previous copy), 2 on usage errors.
var IPRangesUpdate = Command{
	Name:    "ipranges update",
	Summary: "fetch the crawler operators' published IP ranges into the data directory",
	Usage:   "ipranges update [-config FILE] [-data-dir DIR] [-source NAME=URL]... [-force] [-allow-private] [NAME...]",
	run:     runIPRangesUpdate,
}

func runIPRangesUpdate(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Fetch the IP ranges crawler operators publish (Google, Bing, OpenAI,
Perplexity, Apple, Common Crawl, ...) into the data directory, through the
proxy's own fetcher and destination guard, for audit access-log -ip-ranges
auto. Each copy keeps its URL, fetch time, creationTime and prefix count,
and is replaced only once the new file has parsed. NAME limits the update
to those sources (all by default). A source fetched less than an hour ago
is not fetched again (JAFAR asks consumers to poll at most hourly).`, stdio.Stderr)
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
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	srcs, err := ipranges.Select(ipranges.Sources(), fs.Args(), urls)
	if err != nil {
		return usageErr("ipranges update: %v\n%s", err, cmd.usage())
	}
	dir, err := dataDirOf(fs, *dataDir, *cfgFile)
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges update: %w", err)}
	}
	f := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: *allowPrivate}, UserAgent: "robotsproxy"})
	outs := ipranges.Update(ctx, srcs, ipranges.UpdateOptions{Fetcher: f, DataDir: dir, Force: *force})
	tw := tabwriter.NewWriter(stdio.Stdout, 0, 4, 2, ' ', 0)
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
			fmt.Fprintf(stdio.Stderr, "robotsproxy: ipranges update: %s: %v (its previous copy, if any, is kept)\n", o.Source.Name, o.Err)
		}
	}
	fmt.Fprintf(stdio.Stdout, "stored in %s\n", dir)
	if failed > 0 {
		return &exitError{1, fmt.Errorf("ipranges update: %d of %d sources failed", failed, len(outs))}
	}
	return nil
}
