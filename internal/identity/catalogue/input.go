package catalogue

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	rows, err := readManifest(manifest)
	if err != nil {
		return Input{}, nil, err
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
		src := Source{Name: l.Name, Repository: row[1], Path: row[2], Commit: row[3], LicenseText: string(lic)}
		if i := strings.Index(row[len(row)-1], "license="); i >= 0 {
			src.License = strings.TrimPrefix(row[len(row)-1][i:], "license=")
		}
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

// readManifest returns MANIFEST.tsv's rows by their first column.
func readManifest(path string) (map[string][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read crawler catalogue input: %w", err)
	}
	rows := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) >= 5 {
			rows[f[0]] = f
		}
	}
	return rows, sc.Err()
}
