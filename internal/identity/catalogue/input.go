package catalogue

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/robotsproxy/robotsproxy/internal/identity/upstream"
)

// Layout is where each source's data file and licence lie under an
// agents folder (testdata/agents, or the shared corpus's agents/), by
// source name: the folder, the data file in it, and the licence file.
var Layout = []struct{ Name, Dir, File string }{
	{SourceCrawlerUserAgents, "crawler-user-agents", "crawler-user-agents.json"},
	{SourceAIRobotsTxt, "ai-robots-txt", "robots.json"},
	{SourceCommonCrawl, "commoncrawl-robotstxt-experiments", "user-agents-frequent.csv"},
}

// ReadInput reads the three sources from the agents folder dir, laid out
// as Layout says, and their provenance from manifest (a MANIFEST.tsv
// whose rows name files as "agents/<dir>/<file>", then the source
// repository, its path and commit, and whose last column holds
// "license=<SPDX>"). It also returns the licence texts by source name.
func ReadInput(dir, manifest string) (Input, map[string][]byte, error) {
	rows, err := upstream.ReadManifest(manifest)
	if err != nil {
		return Input{}, nil, fmt.Errorf("read crawler catalogue input: %w", err)
	}
	var in Input
	licenses := map[string][]byte{}
	for _, l := range Layout {
		rel := "agents/" + l.Dir + "/" + l.File
		row, ok := rows[rel]
		if !ok {
			return Input{}, nil, fmt.Errorf("read crawler catalogue input: %s has no row for %s", manifest, rel)
		}
		data, err := os.ReadFile(filepath.Join(dir, l.Dir, l.File))
		if err != nil {
			return Input{}, nil, fmt.Errorf("read crawler catalogue input: %w", err)
		}
		lic, err := os.ReadFile(filepath.Join(dir, l.Dir, "LICENSE"))
		if err != nil {
			return Input{}, nil, fmt.Errorf("read crawler catalogue input: %w", err)
		}
		licenses[l.Name] = lic
		src := Source{Name: l.Name, Repository: row.Repository, Path: row.Path, Commit: row.Commit, License: row.License, LicenseText: string(lic)}
		in.Sources = append(in.Sources, src)
		switch l.Name {
		case SourceCrawlerUserAgents:
			in.CrawlerUserAgents = data
		case SourceAIRobotsTxt:
			in.AIRobots = data
		default:
			in.Written = data
		}
	}
	return in, licenses, nil
}
