package audit

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrNotArchived: the archive holds no such body or record.
var ErrNotArchived = errors.New("not in the archive")

// ErrAltered: an archived body does not hash to its name, or is not a
// gzip stream: the archive was changed after it was written.
var ErrAltered = errors.New("archived body does not match its SHA-256")

// maxArchivedBody bounds a body read back from the archive: one octet
// past the largest parse limit (robots' 1 GiB), whatever a changed file
// inflates to.
const maxArchivedBody = 1<<30 + 1

// ReadBody returns the body whose hex SHA-256 is sha from the archive in
// dir. The error wraps ErrNotArchived when there is none, ErrAltered when
// the stored octets do not hash to sha.
func ReadBody(dir, sha string) ([]byte, error) {
	if !isSHAHex(sha) {
		return nil, fmt.Errorf("body %q: not a SHA-256 in hex", sha)
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(bodyName(sha))))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("body %s: %w", sha, ErrNotArchived)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("body %s: %w (%v)", sha, ErrAltered, err)
	}
	body, err := io.ReadAll(io.LimitReader(zr, maxArchivedBody))
	if err != nil {
		return nil, fmt.Errorf("body %s: %w (%v)", sha, ErrAltered, err)
	}
	if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sha {
		return nil, fmt.Errorf("body %s: %w: its octets hash to %x", sha, ErrAltered, got)
	}
	return body, nil
}

// maxRecord bounds a record file read back from the archive, in octets:
// the archive writes records of a few KiB (the proxy keeps at most 64 KiB
// of a response's header), so a larger file was not written by it.
const maxRecord = 1 << 20

// ReadRecord reads one record file (a name from RecordName or
// FindRecords, slash-separated under dir). The error wraps ErrNotArchived
// when there is none; a file over 1 MiB (maxRecord) is an error.
func ReadRecord(dir, name string) (FetchRecord, error) {
	var rec FetchRecord
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, fmt.Errorf("record %s: %w", name, ErrNotArchived)
	}
	if err != nil {
		return rec, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	switch {
	case err != nil:
		return rec, fmt.Errorf("record %s: %w", name, err)
	case len(b) > maxRecord:
		return rec, fmt.Errorf("record %s: larger than %d octets: not a fetch record the archive wrote", name, maxRecord)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("record %s: %w", name, err)
	}
	return rec, nil
}

// FindRecords returns the names of the records of fetches of url at t,
// whatever their body. When t has no fraction of a second (an audit line
// written with seconds only), every fetch of url in that second matches.
func FindRecords(dir, url string, t time.Time) ([]string, error) {
	day, q := FindQuery(url, t)
	names, err := ListDay(os.ReadDir, dir, day)
	if err != nil {
		return nil, err
	}
	return q.Match(day, names), nil
}

// RecordQuery selects the records of one fetch within a day's folder
// (see FindQuery).
type RecordQuery struct {
	prefix string // the name starts with it
	infix  string // and, when not "", contains it
}

// FindQuery returns the day folder (slash-separated, under the archive)
// of the records of url at t and the query that selects them in it:
// FindRecords is ListDay of that folder, matched by the query.
func FindQuery(url string, t time.Time) (string, RecordQuery) {
	t = t.UTC()
	u := sha256.Sum256([]byte(url))
	q := RecordQuery{prefix: t.Format(recTime) + "-" + hex.EncodeToString(u[:8]) + "-"}
	if t.Nanosecond() == 0 {
		q = RecordQuery{prefix: t.Format("150405."), infix: "Z-" + hex.EncodeToString(u[:8]) + "-"}
	}
	return recordsDir + "/" + t.Format(recDay), q
}

// ListDay returns the file names in the day folder day under dir, sorted
// (as os.ReadDir returns them), none when there is no such folder.
// readDir is os.ReadDir, or a function that sorts the same way.
func ListDay(readDir func(string) ([]os.DirEntry, error), dir, day string) ([]string, error) {
	entries, err := readDir(filepath.Join(dir, filepath.FromSlash(day)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// Match returns day/NAME for each record name in names (sorted) that q
// selects, found by binary search.
func (q RecordQuery) Match(day string, names []string) []string {
	var out []string
	i, _ := slices.BinarySearch(names, q.prefix)
	for ; i < len(names) && strings.HasPrefix(names[i], q.prefix); i++ {
		n := names[i]
		if q.infix != "" && !strings.Contains(n, q.infix) {
			continue
		}
		if _, ok := parseRecordName(n); ok {
			out = append(out, day+"/"+n)
		}
	}
	return out
}

// RecordsOf returns the names of every record whose body has the hex
// SHA-256 sha, oldest first.
func RecordsOf(dir, sha string) ([]string, error) {
	var out []string
	root := filepath.Join(dir, recordsDir)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if s, ok := parseRecordName(e.Name()); ok && s == sha {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	slices.Sort(out)
	return out, err
}

// ExpandSHA returns the one archived body whose hex SHA-256 starts with
// prefix (at least 8 hex digits).
func ExpandSHA(dir, prefix string) (string, error) {
	prefix = strings.ToLower(prefix)
	if len(prefix) < 8 || len(prefix) > 64 || !isHexDigits(prefix) {
		return "", fmt.Errorf("%q: want a SHA-256 in hex, or at least its first 8 digits", prefix)
	}
	entries, err := os.ReadDir(filepath.Join(dir, bodiesDir, prefix[:2]))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var found []string
	for _, e := range entries {
		if s, ok := strings.CutSuffix(e.Name(), ".gz"); ok && isSHAHex(s) && strings.HasPrefix(s, prefix) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("body %s: %w", prefix, ErrNotArchived)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s is the start of %d archived bodies: give more digits", prefix, len(found))
}

// isHexDigits reports whether s is lower-case hex digits only.
func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ShowOptions select what Show prints.
type ShowOptions struct {
	// BodyOnly prints the body's octets and nothing else.
	BodyOnly bool
}

// Show writes the archived body whose hex SHA-256 starts with prefix and
// its fetch records to w: one line per record (time, requested URL, final
// URL, status, access result, Content-Type, other headers), a separator
// line giving the size, then the body as fetched. A body that does not
// hash to its name is an error wrapping ErrAltered, and is not printed.
func Show(w io.Writer, dir, prefix string, o ShowOptions) error {
	sha, err := ExpandSHA(dir, prefix)
	if err != nil {
		return err
	}
	body, err := ReadBody(dir, sha)
	if err != nil {
		return err
	}
	if o.BodyOnly {
		_, err := w.Write(body)
		return err
	}
	names, err := RecordsOf(dir, sha)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "sha256 %s, %d octets, %d fetch records\n", sha, len(body), len(names))
	for _, n := range names {
		rec, err := ReadRecord(dir, n)
		if err != nil {
			fmt.Fprintf(&buf, "%s: %v\n", path.Base(n), err)
			continue
		}
		writeRecordLine(&buf, rec)
	}
	fmt.Fprintf(&buf, "--- body (%d octets) ---\n", len(body))
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

// writeRecordLine writes one record as a line of text.
func writeRecordLine(buf *bytes.Buffer, r FetchRecord) {
	fmt.Fprintf(buf, "%s %s", r.FetchedAt.Format(time.RFC3339Nano), r.URL)
	if r.FinalURL != "" && r.FinalURL != r.URL {
		fmt.Fprintf(buf, " -> %s", r.FinalURL)
	}
	fmt.Fprintf(buf, " status %d %s in %gms, parse limit %d", r.Status, r.Result, r.DurationMS, r.ParseLimit)
	for _, k := range []string{"Content-Type", "Cache-Control", "Last-Modified", "Etag"} {
		if v := r.Header.Get(k); v != "" {
			fmt.Fprintf(buf, ", %s: %q", k, v)
		}
	}
	buf.WriteByte('\n')
}
