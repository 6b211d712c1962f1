// Package upstream handles the public lists that identity's embedded data
// is built from: byte copies of upstream files kept under testdata/agents,
// each named with its repository, path, commit, size and SHA-256 in
// testdata/MANIFEST.tsv. It reads their provenance and refreshes them from
// a newer commit. The generators of the crawler catalogue
// (internal/identity/catalogue/gen) and of the browser families
// (internal/identity/uaparser/gen) share it.
package upstream

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Source is one upstream repository's files under an agents folder: the
// folder Dir, the data files in it, and its LICENSE beside them.
type Source struct {
	// Name is how a refresh names the source ("crawler-user-agents").
	Name string
	// Dir is the source's folder under the agents folder.
	Dir string
	// Files are its data files in Dir; LICENSE is implied.
	Files []string
}

// Row is a file's MANIFEST.tsv row: its path under testdata
// ("agents/<dir>/<file>"), the source repository (owner/name), the file's
// path there, the commit it was copied at, and the licence's SPDX
// identifier (the last column's "license=").
type Row struct {
	File, Repository, Path, Commit, License string
}

// ReadManifest returns the rows of a MANIFEST.tsv by their first column.
func ReadManifest(path string) (map[string]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	rows := map[string]Row{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 5 {
			continue
		}
		r := Row{File: f[0], Repository: f[1], Path: f[2], Commit: f[3]}
		if i := strings.Index(f[len(f)-1], "license="); i >= 0 {
			r.License = strings.TrimPrefix(f[len(f)-1][i:], "license=")
		}
		rows[f[0]] = r
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	return rows, nil
}

// maxFile bounds a downloaded upstream file.
const maxFile = 32 << 20

// Update downloads, for each source named in commits (source name →
// commit), its data files and LICENSE at that commit from raw
// (raw/REPO/COMMIT/PATH, the repository and path its MANIFEST.tsv row
// gives: raw.githubusercontent.com's layout) into the agents folder dir,
// and rewrites those rows of manifest with the commit, size and SHA-256.
// An unknown source, a file without a row, a failed download or a
// non-200 answer is an error, and nothing is written then.
func Update(client *http.Client, raw, dir, manifest string, sources []Source, commits map[string]string) error {
	data, err := os.ReadFile(manifest)
	if err != nil {
		return fmt.Errorf("update upstream files: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	type file struct {
		path string
		body []byte
	}
	var files []file
	for name, commit := range commits {
		i := indexSource(sources, name)
		if i < 0 {
			return fmt.Errorf("update upstream files: unknown source %q", name)
		}
		s := sources[i]
		for _, f := range append(append([]string(nil), s.Files...), "LICENSE") {
			rel := "agents/" + s.Dir + "/" + f
			i := rowIndex(lines, rel)
			if i < 0 {
				return fmt.Errorf("update upstream files: %s has no row for %s", manifest, rel)
			}
			row := strings.Split(lines[i], "\t")
			body, err := download(client, raw+"/"+row[1]+"/"+commit+"/"+row[2])
			if err != nil {
				return err
			}
			sum := sha256.Sum256(body)
			row[3], row[4], row[5] = commit, strconv.Itoa(len(body)), hex.EncodeToString(sum[:])
			lines[i] = strings.Join(row, "\t")
			files = append(files, file{filepath.Join(dir, s.Dir, f), body})
		}
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.body, 0o644); err != nil {
			return fmt.Errorf("update upstream files: %w", err)
		}
	}
	return os.WriteFile(manifest, []byte(strings.Join(lines, "\n")), 0o644)
}

func indexSource(sources []Source, name string) int {
	for i, s := range sources {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func rowIndex(lines []string, rel string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, rel+"\t") && len(strings.Split(l, "\t")) >= 6 {
			return i
		}
	}
	return -1
}

func download(client *http.Client, url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, fmt.Errorf("update upstream files: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("update upstream files: GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("update upstream files: GET %s: %w", url, err)
	}
	if len(body) > maxFile {
		return nil, fmt.Errorf("update upstream files: GET %s: over %d octets", url, maxFile)
	}
	return body, nil
}
