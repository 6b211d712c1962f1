// Command gen rebuilds robotsproxy's embedded ua-parser data
// (internal/identity/uaparser/data) from the copy of uap-core's
// regexes.yaml kept in testdata/agents/uap-core, whose source and commit
// testdata/MANIFEST.tsv gives:
//
//	go generate ./internal/identity/...
//
// To refresh from a newer uap-core commit, name it: gen downloads
// regexes.yaml, tests/test_ua.yaml and LICENSE at that commit into
// testdata/agents/uap-core, rewrites their MANIFEST.tsv rows (commit,
// size, SHA-256), then rebuilds:
//
//	go run ./internal/identity/uaparser/gen -update uap-core=COMMIT
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

	"github.com/robotsproxy/robotsproxy/internal/identity/uaparser"
	"github.com/robotsproxy/robotsproxy/internal/identity/upstream"
)

func main() {
	agents := flag.String("agents", "testdata/agents", "the agents folder holding the upstream files")
	manifest := flag.String("manifest", "testdata/MANIFEST.tsv", "the MANIFEST.tsv giving their sources")
	out := flag.String("out", "internal/identity/uaparser/data", "the folder to write regexes.yaml and the licence to")
	raw := flag.String("raw", "https://raw.githubusercontent.com", "where -update downloads repository files from (REPO/COMMIT/PATH)")
	var update string
	flag.StringVar(&update, "update", "", "download `uap-core=COMMIT` first")
	flag.Parse()
	if err := run(*agents, *manifest, *out, *raw, update); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(agents, manifest, out, raw, update string) error {
	if update != "" {
		name, commit, ok := strings.Cut(update, "=")
		if !ok || commit == "" {
			return fmt.Errorf("-update: want uap-core=COMMIT, got %q", update)
		}
		client := &http.Client{Timeout: time.Minute}
		if err := upstream.Update(client, raw, agents, manifest, []upstream.Source{uaparser.Upstream}, map[string]string{name: commit}); err != nil {
			return err
		}
	}
	data, src, err := uaparser.ReadInput(agents, manifest)
	if err != nil {
		return err
	}
	f, err := uaparser.Build(data, src)
	if err != nil {
		return err
	}
	enc, err := uaparser.Encode(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "regexes.yaml"), enc, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "LICENSE.uap-core"), []byte(src.LicenseText), 0o644); err != nil {
		return err
	}
	fmt.Printf("gen: %d family rules, %d spider rules, version %s\n", len(f.Families), len(f.Spiders), f.Source.Version())
	return nil
}
