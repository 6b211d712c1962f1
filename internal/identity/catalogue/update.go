package catalogue

import (
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

// maxUpstream bounds a downloaded upstream file.
const maxUpstream = 32 << 20

// Update downloads, for each source named in commits (source name →
// commit), its data file and LICENSE at that commit from raw
// (raw/REPO/COMMIT/PATH, the repository and path its MANIFEST.tsv row
// gives) into the agents folder dir, and rewrites those rows of manifest
// with the commit, size and SHA-256. An unknown source, a failed
// download or a non-200 answer is an error, and nothing is written then.
func Update(client *http.Client, raw, dir, manifest string, commits map[string]string) error {
	data, err := os.ReadFile(manifest)
	if err != nil {
		return fmt.Errorf("update crawler catalogue input: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	type file struct {
		path string
		body []byte
	}
	var files []file
	for name, commit := range commits {
		found := false
		for _, l := range Layout {
			if l.Name != name {
				continue
			}
			found = true
			for _, f := range []string{l.File, "LICENSE"} {
				rel := "agents/" + l.Dir + "/" + f
				i := rowIndex(lines, rel)
				if i < 0 {
					return fmt.Errorf("update crawler catalogue input: %s has no row for %s", manifest, rel)
				}
				row := strings.Split(lines[i], "\t")
				body, err := download(client, raw+"/"+row[1]+"/"+commit+"/"+row[2])
				if err != nil {
					return err
				}
				sum := sha256.Sum256(body)
				row[3], row[4], row[5] = commit, strconv.Itoa(len(body)), hex.EncodeToString(sum[:])
				lines[i] = strings.Join(row, "\t")
				files = append(files, file{filepath.Join(dir, l.Dir, f), body})
			}
		}
		if !found {
			return fmt.Errorf("update crawler catalogue input: unknown source %q", name)
		}
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.body, 0o644); err != nil {
			return fmt.Errorf("update crawler catalogue input: %w", err)
		}
	}
	return os.WriteFile(manifest, []byte(strings.Join(lines, "\n")), 0o644)
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
		return nil, fmt.Errorf("update crawler catalogue input: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("update crawler catalogue input: GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstream+1))
	if err != nil {
		return nil, fmt.Errorf("update crawler catalogue input: GET %s: %w", url, err)
	}
	if len(body) > maxUpstream {
		return nil, fmt.Errorf("update crawler catalogue input: GET %s: over %d octets", url, maxUpstream)
	}
	return body, nil
}
