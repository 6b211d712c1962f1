package command

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/ipranges"
)

// IPRangesShow is "robotsproxy ipranges show": the copies ipranges update
// stored, read and checked as -ip-ranges auto reads them; exit 2 when one
// does not match its record or does not parse.
var IPRangesShow = Command{
	Name:    "ipranges show",
	Summary: "list the stored IP ranges: source, URL, fetch time, creationTime, prefixes",
	Usage:   "ipranges show [-config FILE] [-data-dir DIR]",
	run:     runIPRangesShow,
}

func runIPRangesShow(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`List the copies ipranges update stored: each source's file, URL, fetch
time, creationTime, prefix count and product tokens. A copy that does not
match its record or does not parse is an error (exit 2).`, stdio.Stderr)
	cfgFile := fs.String("config", defaultConfig, "configuration `FILE`, for its data_dir")
	dataDir := fs.String("data-dir", "", "the data `DIR` (overrides data_dir)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	dir, err := dataDirOf(fs, *dataDir, *cfgFile)
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges show: %w", err)}
	}
	stored, err := ipranges.Load(dir)
	if err != nil {
		return &exitError{2, fmt.Errorf("ipranges show: %w", err)}
	}
	if len(stored) == 0 {
		fmt.Fprintf(stdio.Stdout, "no ranges stored in %s: run robotsproxy ipranges update\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(stdio.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "source\tprefixes\tcreationTime\tfetched\tformat\tproduct tokens\tfile\tURL\n")
	for _, s := range stored {
		created := "-"
		if s.CreationTime != nil {
			created = s.CreationTime.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Prefixes, created, s.FetchedAt.Format(time.RFC3339), s.Format,
			strings.Join(s.ProductTokens(), ","), s.Path, s.URL)
	}
	return tw.Flush()
}
