package audit

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// The robots.txt archive is a directory:
//
//	bodies/ab/abcdef….gz                     each distinct body once, gzip, by SHA-256
//	records/2026-11-22/201050.123456789Z-U-S.json  one fetch record each
//	tmp/                                      files being written
//
// A record's name is its fetch time (UTC, nanoseconds), U the first 16 hex
// digits of the SHA-256 of the requested robots.txt URL, and S the body's
// SHA-256 in hex or "none": names sort by fetch time, and a record can be
// found from an audit line (robots_url, robots_fetched_at, robots_sha256)
// without reading any other. Every file is written to tmp/, synced, and
// renamed into place, so a crash leaves no half file (at most a file in
// tmp/, removed by the next OpenArchive).

const (
	bodiesDir  = "bodies"
	recordsDir = "records"
	tmpDir     = "tmp"
	noBody     = "none"
	// recTime is the layout of a record name's time; recDay its folder's.
	recTime = "150405.000000000Z"
	recDay  = "2006-01-02"
)

// FetchRecord is one robots.txt fetch as the archive keeps it, one JSON
// file per fetch: access.Record, the form a fleet shares results in too.
type FetchRecord = access.Record

// ArchiveOptions configure an Archive.
type ArchiveOptions struct {
	// Dir is the archive directory; it is created when missing. Required.
	Dir string
	// MaxBytes bounds the octets of the archive's files; past it the
	// oldest records, and the bodies no record refers to any more, are
	// removed, never the newest record. 0 means no bound.
	MaxBytes int64
	// ParseLimit is the parse limit in octets the proxy parses bodies
	// with (robots.Options.Limit()); each record keeps it.
	ParseLimit int
	// Log receives one line per pruned record and per removed leftover.
	Log zerolog.Logger
}

// archived is one record file in the index.
type archived struct {
	name string // records/DAY/FILE, slash-separated
	size int64
	sha  string // hex, or noBody
}

// Archive stores robots.txt bodies and fetch records (see the layout
// above). It is safe for concurrent use.
type Archive struct {
	opts ArchiveOptions

	mu      sync.Mutex
	records []archived       // sorted by name: oldest first
	bodies  map[string]int64 // sha hex -> body file size
	refs    map[string]int   // sha hex -> records that refer to it
	total   int64            // octets of records and bodies
}

// OpenArchive opens (creating it when needed) the archive in o.Dir: it
// removes files a crash left in tmp/, indexes the records and bodies,
// removes bodies no record refers to, and prunes to o.MaxBytes.
func OpenArchive(o ArchiveOptions) (*Archive, error) {
	if o.Dir == "" {
		return nil, errors.New("robots.txt archive: no directory")
	}
	for _, d := range []string{bodiesDir, recordsDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("robots.txt archive: %w", err)
		}
	}
	a := &Archive{opts: o, bodies: map[string]int64{}, refs: map[string]int{}}
	if err := a.clearTmp(); err != nil {
		return nil, err
	}
	if err := a.index(); err != nil {
		return nil, fmt.Errorf("robots.txt archive %s: %w", o.Dir, err)
	}
	for sha := range a.bodies {
		if a.refs[sha] == 0 {
			a.removeBody(sha, "no record refers to it")
		}
	}
	a.prune()
	return a, nil
}

// clearTmp removes what a crash left half written.
func (a *Archive) clearTmp() error {
	dir := filepath.Join(a.opts.Dir, tmpDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("robots.txt archive: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("robots.txt archive: %w", err)
		}
		a.opts.Log.Warn().Str("file", filepath.Join(dir, e.Name())).Msg("robots.txt archive: removed a file left half written")
	}
	return nil
}

// index reads the names and sizes of every record and body.
func (a *Archive) index() error {
	err := filepath.WalkDir(filepath.Join(a.opts.Dir, recordsDir), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		sha, ok := parseRecordName(e.Name())
		info, ierr := e.Info()
		if !ok || ierr != nil {
			return nil // not ours
		}
		rel, _ := filepath.Rel(a.opts.Dir, p)
		a.records = append(a.records, archived{name: filepath.ToSlash(rel), size: info.Size(), sha: sha})
		a.total += info.Size()
		if sha != noBody {
			a.refs[sha]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(a.records, func(x, y archived) int { return strings.Compare(x.name, y.name) })
	return filepath.WalkDir(filepath.Join(a.opts.Dir, bodiesDir), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		sha, ok := strings.CutSuffix(e.Name(), ".gz")
		info, ierr := e.Info()
		if ok && isSHAHex(sha) && ierr == nil {
			a.bodies[sha] = info.Size()
			a.total += info.Size()
		}
		return nil
	})
}

// Record archives one fetch: its body (when one was read and is not
// archived yet) and its fetch record, then prunes to MaxBytes. The body is
// written first, so a record never names a missing body. A fetch already
// recorded (same URL, FetchedAt and body: a shared result handed out
// again) is not written twice. The body is compressed only when it is not
// archived yet, outside the lock.
func (a *Archive) Record(acc policy.Access) error {
	rec := newFetchRecord(acc, a.opts.ParseLimit)
	name := RecordName(rec.URL, rec.FetchedAt, rec.SHA256)
	recorded, needBody := a.lookup(name, rec.SHA256)
	if recorded {
		return nil
	}
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("robots.txt archive: %w", err)
	}
	recJSON = append(recJSON, '\n')
	var gz []byte
	if needBody {
		if gz, err = gzipBytes(acc.Raw); err != nil {
			return fmt.Errorf("robots.txt archive: %w", err)
		}
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	if _, found := a.find(name); found { // recorded meanwhile
		return nil
	}
	if rec.SHA256 != "" {
		if _, ok := a.bodies[rec.SHA256]; !ok {
			if gz == nil { // pruned meanwhile
				if gz, err = gzipBytes(acc.Raw); err != nil {
					return fmt.Errorf("robots.txt archive: %w", err)
				}
			}
			if err := a.writeFile(bodyName(rec.SHA256), gz); err != nil {
				return err
			}
			a.bodies[rec.SHA256] = int64(len(gz))
			a.total += int64(len(gz))
		}
	}
	if err := a.writeFile(name, recJSON); err != nil {
		if a.refs[rec.SHA256] == 0 && rec.SHA256 != "" {
			a.removeBody(rec.SHA256, "its record could not be written")
		}
		return err
	}
	a.insert(archived{name: name, size: int64(len(recJSON)), sha: BodyOrNone(rec.SHA256)})
	a.prune()
	return nil
}

// lookup reports whether the record name is indexed already, and whether
// the body sha ("" for none) is still to be archived.
func (a *Archive) lookup(name, sha string) (recorded, needBody bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, recorded = a.find(name); recorded {
		return true, false
	}
	_, archived := a.bodies[sha]
	return false, sha != "" && !archived
}

// newFetchRecord converts an Access into its record.
func newFetchRecord(acc policy.Access, parseLimit int) FetchRecord {
	return access.NewRecord(acc, parseLimit)
}

// find returns where the record name is, or would be, in the index.
func (a *Archive) find(name string) (int, bool) {
	return slices.BinarySearchFunc(a.records, name, func(x archived, n string) int { return strings.Compare(x.name, n) })
}

// insert adds a record to the index in name order.
func (a *Archive) insert(r archived) {
	i, _ := a.find(r.name)
	a.records = slices.Insert(a.records, i, r)
	a.total += r.size
	if r.sha != noBody {
		a.refs[r.sha]++
	}
}

// prune removes the oldest records, and bodies left without a record,
// until the archive fits MaxBytes, keeping the newest record; the index
// drops the removed records at once. Called with a.mu held.
func (a *Archive) prune() {
	if a.opts.MaxBytes <= 0 {
		return
	}
	cut := 0
	for ; a.total > a.opts.MaxBytes && cut < len(a.records)-1; cut++ {
		r := a.records[cut]
		if err := os.Remove(a.path(r.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.opts.Log.Error().Err(err).Str("record", r.name).Msg("robots.txt archive: cannot prune a record")
			break
		}
		a.total -= r.size
		bodyGone := false
		if r.sha != noBody {
			if a.refs[r.sha]--; a.refs[r.sha] <= 0 {
				delete(a.refs, r.sha)
				bodyGone = a.removeBody(r.sha, "")
			}
		}
		_ = os.Remove(filepath.Dir(a.path(r.name))) // the day's folder, once empty
		a.opts.Log.Info().Str("record", r.name).Str("sha256", r.sha).Bool("body_removed", bodyGone).
			Int64("archive_bytes", a.total).Int64("max_bytes", a.opts.MaxBytes).
			Msg("robots.txt archive: pruned the oldest fetch record")
	}
	a.records = slices.Delete(a.records, 0, cut)
}

// removeBody deletes a body file and reports whether it did. why, when
// not "", is logged.
func (a *Archive) removeBody(sha, why string) bool {
	if err := os.Remove(a.path(bodyName(sha))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.opts.Log.Error().Err(err).Str("sha256", sha).Msg("robots.txt archive: cannot remove a body")
		return false
	}
	a.total -= a.bodies[sha]
	delete(a.bodies, sha)
	if why != "" {
		a.opts.Log.Info().Str("sha256", sha).Str("why", why).Msg("robots.txt archive: removed a body")
	}
	return true
}

// writeFile writes data to name (slash-separated, under Dir) atomically:
// a synced file in tmp/, renamed into place.
func (a *Archive) writeFile(name string, data []byte) error {
	dst := a.path(name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("robots.txt archive: %w", err)
	}
	f, err := os.CreateTemp(filepath.Join(a.opts.Dir, tmpDir), "w-*")
	if err != nil {
		return fmt.Errorf("robots.txt archive: %w", err)
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("robots.txt archive: write %s: %w", name, err)
	}
	return nil
}

func (a *Archive) path(name string) string {
	return filepath.Join(a.opts.Dir, filepath.FromSlash(name))
}

// Stats returns the number of records and bodies and the octets they take.
func (a *Archive) Stats() (records, bodies int, bytes int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.records), len(a.bodies), a.total
}

// RecordName returns the slash-separated path, under the archive
// directory, of the record of a fetch of url at t whose body has the hex
// SHA-256 sha ("" for none).
func RecordName(url string, t time.Time, sha string) string {
	t = t.UTC()
	u := sha256.Sum256([]byte(url))
	return recordsDir + "/" + t.Format(recDay) + "/" + t.Format(recTime) + "-" + hex.EncodeToString(u[:8]) + "-" + BodyOrNone(sha) + ".json"
}

// parseRecordName returns the body SHA-256 (hex or "none") a record file
// name carries; ok is false when name is not a record's.
func parseRecordName(name string) (sha string, ok bool) {
	base, ok := strings.CutSuffix(name, ".json")
	parts := strings.Split(base, "-")
	if !ok || len(parts) != 3 || len(parts[1]) != 16 || parts[2] != noBody && !isSHAHex(parts[2]) {
		return "", false
	}
	return parts[2], true
}

// bodyName returns the slash-separated path of a body under the archive.
func bodyName(sha string) string { return bodiesDir + "/" + sha[:2] + "/" + sha + ".gz" }

// BodyOrNone returns sha, or "none" when it is "": how a record name, and
// audit verify's messages, name a fetch that read no body.
func BodyOrNone(sha string) string {
	if sha == "" {
		return noBody
	}
	return sha
}

// isSHAHex reports whether s is 64 lower-case hex digits.
func isSHAHex(s string) bool { return len(s) == 2*sha256.Size && isHexDigits(s) }

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
