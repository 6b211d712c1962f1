package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RecordsOfURL returns the names of every record of a fetch of url in the
// archive in dir, oldest first, for ReadRecord: the robots.txt history the
// proxy saw for one authority. None when the archive has no records.
func RecordsOfURL(dir, url string) ([]string, error) {
	u := sha256.Sum256([]byte(url))
	infix := "Z-" + hex.EncodeToString(u[:8]) + "-"
	days, err := os.ReadDir(filepath.Join(dir, recordsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range days {
		if !d.IsDir() {
			continue
		}
		day := recordsDir + "/" + d.Name()
		names, err := ListDay(os.ReadDir, dir, day)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if _, ok := parseRecordName(n); ok && strings.Contains(n, infix) {
				out = append(out, day+"/"+n)
			}
		}
	}
	return out, nil
}
