package uaparser

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/robotsproxy/robotsproxy/internal/identity/upstream"
)

// Upstream is uap-core's folder under an agents folder (testdata/agents):
// regexes.yaml, which the data is built from, and tests/test_ua.yaml, the
// test cases of the same commit, which the browser corpus tests read. A
// refresh downloads both and the LICENSE.
var Upstream = upstream.Source{Name: "uap-core", Dir: "uap-core", Files: []string{"regexes.yaml", "test_ua.yaml"}}

// ReadInput reads regexes.yaml and the LICENSE from uap-core's folder of
// the agents folder dir, and their provenance from manifest (a
// MANIFEST.tsv, see upstream.ReadManifest).
func ReadInput(dir, manifest string) ([]byte, Source, error) {
	rows, err := upstream.ReadManifest(manifest)
	if err != nil {
		return nil, Source{}, fmt.Errorf("read ua-parser input: %w", err)
	}
	rel := "agents/" + Upstream.Dir + "/regexes.yaml"
	row, ok := rows[rel]
	if !ok {
		return nil, Source{}, fmt.Errorf("read ua-parser input: %s has no row for %s", manifest, rel)
	}
	data, err := os.ReadFile(filepath.Join(dir, Upstream.Dir, "regexes.yaml"))
	if err != nil {
		return nil, Source{}, fmt.Errorf("read ua-parser input: %w", err)
	}
	lic, err := os.ReadFile(filepath.Join(dir, Upstream.Dir, "LICENSE"))
	if err != nil {
		return nil, Source{}, fmt.Errorf("read ua-parser input: %w", err)
	}
	return data, Source{Repository: row.Repository, Path: row.Path, Commit: row.Commit, License: row.License, LicenseText: string(lic)}, nil
}
