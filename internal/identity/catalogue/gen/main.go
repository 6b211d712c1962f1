// Command gen rebuilds robotsproxy's embedded crawler catalogue
// (internal/identity/catalogue/data) from the upstream files kept in
// testdata/agents, whose source and commit testdata/MANIFEST.tsv gives:
//
//	go generate ./internal/identity/...
//
// To refresh the catalogue from newer upstream commits, name them: gen
// downloads each source's file and LICENSE at that commit into
// testdata/agents, rewrites its MANIFEST.tsv rows (commit, size,
// SHA-256), then rebuilds:
//
//	go run ./internal/identity/catalogue/gen -agents testdata/agents -manifest testdata/MANIFEST.tsv \
//	    -out internal/identity/catalogue/data \
//	    -update crawler-user-agents=COMMIT -update ai.robots.txt=COMMIT
//
// Then run the tests (go test ./...): they read the same files.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
)

type updates map[string]string

func (u updates) String() string { return fmt.Sprint(map[string]string(u)) }

func (u updates) Set(s string) error {
	name, commit, ok := strings.Cut(s, "=")
	if !ok || commit == "" {
		return fmt.Errorf("want SOURCE=COMMIT, got %q", s)
	}
	u[name] = commit
	return nil
}

func main() {
	agents := flag.String("agents", "testdata/agents", "the agents folder holding the upstream files")
	manifest := flag.String("manifest", "testdata/MANIFEST.tsv", "the MANIFEST.tsv giving their sources")
	out := flag.String("out", "internal/identity/catalogue/data", "the folder to write catalogue.json and the licences to")
	raw := flag.String("raw", "https://raw.githubusercontent.com", "where -update downloads repository files from (REPO/COMMIT/PATH)")
	up := updates{}
	flag.Var(up, "update", "download `SOURCE=COMMIT` first (crawler-user-agents, ai.robots.txt, commoncrawl-robotstxt-experiments); repeatable")
	flag.Parse()
	if err := run(*agents, *manifest, *out, *raw, up); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(agents, manifest, out, raw string, up updates) error {
	if len(up) > 0 {
		client := &http.Client{Timeout: time.Minute}
		if err := catalogue.Update(client, raw, agents, manifest, up); err != nil {
			return err
		}
	}
	in, licenses, err := catalogue.ReadInput(agents, manifest)
	if err != nil {
		return err
	}
	f, err := catalogue.Build(in)
	if err != nil {
		return err
	}
	data, err := catalogue.Encode(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "catalogue.json"), data, 0o644); err != nil {
		return err
	}
	for name, text := range licenses {
		if err := os.WriteFile(filepath.Join(out, "LICENSE."+name), text, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("gen: %d entries, version %s\n", len(f.Entries), f.Version())
	return nil
}
