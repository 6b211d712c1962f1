package ipranges

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Dir is the directory of the stored copies, under the data directory.
const Dir = "ipranges"

// dirMode is the mode of a data directory Save creates: the proxy's CA
// key lives in the same directory, so it is private (as mitm.DirMode).
const dirMode fs.FileMode = 0o700

// recordSuffix ends the name of a stored copy's record.
const recordSuffix = ".record.json"

// Record is what the data directory keeps of a ranges file besides its
// octets: where and when it was fetched, what the publisher says of it,
// and what it covers.
type Record struct {
	// Name is the source's name (Source.Name).
	Name string `json:"name"`
	// Operator runs the crawlers.
	Operator string `json:"operator"`
	// URL is the URL fetched; FinalURL the one that answered, after
	// redirects, when it differs.
	URL      string `json:"url"`
	FinalURL string `json:"final_url,omitempty"`
	// Tokens are the product tokens the file verifies.
	Tokens []string `json:"product_tokens"`
	// FetchedAt is when the fetch began.
	FetchedAt time.Time `json:"fetched_at"`
	// CreationTime is the file's creationTime, nil when it states none.
	CreationTime *time.Time `json:"creation_time,omitempty"`
	// Format is FormatGoogle, FormatJAFAR or FormatPlain; Prefixes the
	// number of prefixes read, Ignored the prefix objects passed over.
	Format   string `json:"format"`
	Prefixes int    `json:"prefixes"`
	Ignored  int    `json:"ignored,omitempty"`
	// SHA256 is the hex SHA-256 of the octets as fetched, and Body the
	// name of the file that holds them, beside the record.
	SHA256 string `json:"sha256"`
	Body   string `json:"body"`
}

// Stored is a stored copy as Load reads it.
type Stored struct {
	Record
	// Path is the file holding the octets as fetched.
	Path string
	// File is the copy, parsed.
	File *File
}

// ProductTokens are the product tokens the copy verifies: those this
// version knows its source covers (Sources), which may have grown since
// it was stored; the record's own for a source it does not know.
func (s *Stored) ProductTokens() []string {
	for _, src := range sources {
		if src.Name == s.Name {
			return slices.Clone(src.Tokens)
		}
	}
	return s.Tokens
}

var storedName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// Save stores body (which parsed as f) as rec.Name's copy in
// DATA_DIR/ipranges, filling rec's digest, body name and counts. It
// replaces the previous copy atomically: the octets go to a new file
// named by their digest, then the record is renamed into place (the one
// step that switches copies), then the previous octets are removed. A
// crash leaves the previous copy or the new one, never a mix.
func Save(dataDir string, rec Record, body []byte, f *File) (Record, error) {
	if !storedName.MatchString(rec.Name) {
		return rec, fmt.Errorf("source name %q: want lower-case letters, digits and -", rec.Name)
	}
	dir := filepath.Join(dataDir, Dir)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return rec, fmt.Errorf("ranges store: %w", err)
	}
	sum := sha256.Sum256(body)
	rec.SHA256 = hex.EncodeToString(sum[:])
	ext := ".json"
	if f.Format == FormatPlain && (len(body) == 0 || body[0] != '[') {
		ext = ".txt"
	}
	rec.Body = rec.Name + "-" + rec.SHA256[:16] + ext
	rec.Format, rec.Prefixes, rec.Ignored = f.Format, len(f.Prefixes), f.Ignored
	rec.CreationTime = nil
	if !f.CreationTime.IsZero() {
		t := f.CreationTime
		rec.CreationTime = &t
	}
	prev, _ := readRecord(filepath.Join(dir, rec.Name+recordSuffix))
	if err := writeFile(filepath.Join(dir, rec.Body), body); err != nil {
		return rec, err
	}
	js, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return rec, err
	}
	if err := writeFile(filepath.Join(dir, rec.Name+recordSuffix), append(js, '\n')); err != nil {
		return rec, err
	}
	if prev != nil && prev.Body != rec.Body && storedBody(prev.Name, prev.Body) {
		os.Remove(filepath.Join(dir, prev.Body))
	}
	return rec, nil
}

// storedBody reports whether body is a name Save gives name's octets, so
// that only such a file is ever removed.
func storedBody(name, body string) bool {
	rest, ok := strings.CutPrefix(body, name+"-")
	return ok && len(rest) == 16+len(filepath.Ext(rest)) && !strings.ContainsAny(rest, `/\`)
}

// writeFile writes b to path whole or not at all: to a temporary file
// beside it, synced, then renamed over path.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("ranges store: %w", err)
	}
	_, err = tmp.Write(b)
	err = errors.Join(err, tmp.Chmod(0o644), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("ranges store: %w", err)
	}
	return nil
}

// Lookup returns the record of name's stored copy, nil when none is
// stored.
func Lookup(dataDir, name string) (*Record, error) {
	if !storedName.MatchString(name) {
		return nil, nil
	}
	return readRecord(filepath.Join(dataDir, Dir, name+recordSuffix))
}

func readRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ranges store: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("ranges store: %s: %w", path, err)
	}
	return &r, nil
}

// Load reads every copy stored in DATA_DIR/ipranges, by name; none is no
// error. A copy whose octets are missing, do not match its record's
// digest or do not parse is an error naming it: the store is read whole
// or not at all.
func Load(dataDir string) ([]Stored, error) {
	dir := filepath.Join(dataDir, Dir)
	paths, err := filepath.Glob(filepath.Join(dir, "*"+recordSuffix))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []Stored
	for _, p := range paths {
		r, err := readRecord(p)
		if err != nil {
			return nil, err
		}
		if r == nil || !storedBody(r.Name, r.Body) {
			return nil, fmt.Errorf("ranges store: %s: not a record ipranges update wrote", p)
		}
		s := Stored{Record: *r, Path: filepath.Join(dir, r.Body)}
		body, err := readAll(s.Path)
		if err != nil {
			return nil, fmt.Errorf("ranges store: %s: %w (run robotsproxy ipranges update)", r.Name, err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != r.SHA256 {
			return nil, fmt.Errorf("ranges store: %s: %s does not hash to its record's sha256 (run robotsproxy ipranges update)", r.Name, s.Path)
		}
		if s.File, err = Parse(body); err != nil {
			return nil, fmt.Errorf("ranges store: %s: %w", s.Path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// readAll reads a ranges file of at most MaxBody octets.
func readAll(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBody+1))
	if err == nil && len(b) > MaxBody {
		err = fmt.Errorf("larger than %d octets", MaxBody)
	}
	return b, err
}

// ReadFile reads and parses a ranges file on disk (at most MaxBody
// octets).
func ReadFile(path string) (*File, error) {
	b, err := readAll(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}
