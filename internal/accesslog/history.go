package accesslog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// MaxRobotsBody is the largest robots.txt version read, in octets; a
// larger one is an error. A version is hashed whole, as sha256sum hashes
// the file, and parsed as check parses it (robots.Parse applies the
// RFC 9309 2.5 parse limit).
const MaxRobotsBody = 16 << 20

// Version is one robots.txt version of a site's history: in force from
// From until the next version's From.
type Version struct {
	// From is when the version came into force; the zero time for a
	// single file in force for the whole log.
	From time.Time
	// Source names where it was read: a file path, or "git:COMMIT".
	Source string
	// load reads its body; absent is true when the site had no
	// robots.txt then (a git commit that deleted it).
	load func() (body []byte, absent bool, err error)
}

// loaded is a version as decided on: compiled once, kept in a bounded
// cache.
type loaded struct {
	access policy.Access // a successful access to the version, unless absent
	absent bool
	size   int // estimated octets held
}

// History is a site's robots.txt versions in time order. Bodies are read
// when first needed and compiled versions of about historyBytes are kept,
// so a history of any length stays bounded in memory. Not safe for
// concurrent use.
type History struct {
	versions []Version
	cache    *memo.LRU[int, *loaded]
	// notText says, by version index, why a version read is not text
	// (robots.NotText).
	notText map[int]string
}

// historyBytes bounds the estimated size of the compiled versions kept
// (those of the 24-hour windows being judged), in octets.
const historyBytes = 32 << 20

// loadedSize estimates the memory a compiled version holds: its body
// several times over, plus a fixed cost.
func loadedSize(_ int, l *loaded) int64 { return int64(l.size) }

func newHistory(vs []Version) (*History, error) {
	if len(vs) == 0 {
		return nil, errors.New("no robots.txt version")
	}
	slices.SortStableFunc(vs, func(a, b Version) int { return a.From.Compare(b.From) })
	return &History{versions: vs, cache: memo.NewLRU[int, *loaded](len(vs), historyBytes, loadedSize)}, nil
}

// Len is the number of versions.
func (h *History) Len() int { return len(h.versions) }

// Version returns version i (0 the oldest).
func (h *History) Version(i int) Version { return h.versions[i] }

// Until is when version i stopped being in force, the zero time for the
// last one.
func (h *History) Until(i int) time.Time {
	if i+1 < len(h.versions) {
		return h.versions[i+1].From
	}
	return time.Time{}
}

// get returns version i compiled.
func (h *History) get(i int) (*loaded, error) {
	if l, ok := h.cache.Get(i); ok {
		return l, nil
	}
	body, absent, err := h.versions[i].load()
	if err != nil {
		return nil, fmt.Errorf("robots.txt version %s: %w", h.versions[i].Source, err)
	}
	l := &loaded{absent: absent, size: 4*len(body) + 2048}
	if why := robots.NotText(body); why != "" && !absent {
		if h.notText == nil {
			h.notText = map[int]string{}
		}
		h.notText[i] = why
	}
	if !absent {
		l.access = policy.Access{Result: policy.Successful, Robots: robots.Parse(body), SHA256: sha256.Sum256(body)}
	}
	h.cache.Add(i, l, nil)
	return l, nil
}

// warnings returns a WarnRobotsNotText warning for each version read that
// is not text, oldest first.
func (h *History) warnings() []Warning {
	var out []Warning
	for i := range h.versions {
		why, ok := h.notText[i]
		if !ok {
			continue
		}
		src := h.versions[i].Source
		out = append(out, Warning{Kind: WarnRobotsNotText, Source: src, Message: fmt.Sprintf(
			"robots.txt version %s is not text (%s): robots.txt is UTF-8 text (RFC 9309 2.3), so its rules were read from whatever could be read of it, likely none, and the requests it decided count as allowed", src, why)})
	}
	return out
}

// window returns the indexes [lo, hi] of the versions in force at some
// moment of [start, end], and whether part of that span lies before the
// first version (a robots.txt the history does not know). hi < lo when no
// version was in force at end.
func (h *History) window(start, end time.Time) (lo, hi int, unknown bool) {
	// at is the index of the last version with From <= t, -1 for none.
	at := func(t time.Time) int {
		i, _ := slices.BinarySearchFunc(h.versions, t, func(v Version, t time.Time) int {
			if v.From.After(t) {
				return 1
			}
			return -1
		})
		return i - 1
	}
	lo, hi = at(start), at(end)
	if lo < 0 {
		lo, unknown = 0, true
	}
	return lo, hi, unknown
}

// LoadHistory reads a robots.txt history from spec:
//   - "archive:ARCHIVE_DIR:ROBOTS_URL": the fetches of ROBOTS_URL in the
//     proxy's robots.txt archive (see archiveHistory);
//   - "git:REPO_DIR:PATH": the file's history in a git repository, read
//     with "git log --follow" through the git binary; each commit's
//     version is in force from its committer date;
//   - a directory: one version per file, named by the UTC time from which
//     it is in force ("2026-11-20T00:00:00Z.txt", "-" allowed for ":");
//   - a file: in force for the whole log.
func LoadHistory(ctx context.Context, spec string) (*History, error) {
	if rest, ok := strings.CutPrefix(spec, "archive:"); ok {
		dir, url, ok := strings.Cut(rest, ":")
		if !ok || dir == "" || url == "" {
			return nil, fmt.Errorf("robots history %q: want archive:ARCHIVE_DIR:ROBOTS_URL", spec)
		}
		return archiveHistory(dir, url)
	}
	if rest, ok := strings.CutPrefix(spec, "git:"); ok {
		repo, path, ok := strings.Cut(rest, ":")
		if !ok || repo == "" || path == "" {
			return nil, fmt.Errorf("robots history %q: want git:REPO_DIR:PATH", spec)
		}
		return gitHistory(ctx, repo, path)
	}
	fi, err := os.Stat(spec)
	if err != nil {
		return nil, fmt.Errorf("robots history: %w", err)
	}
	if fi.IsDir() {
		return dirHistory(spec)
	}
	h, err := newHistory([]Version{{Source: spec, load: fileLoader(spec)}})
	if err != nil {
		return nil, err
	}
	if _, err := h.get(0); err != nil { // read now: an unreadable or binary file is known before the log is
		return nil, fmt.Errorf("robots history: %w", err)
	}
	return h, nil
}

func fileLoader(path string) func() ([]byte, bool, error) {
	return func() ([]byte, bool, error) {
		b, err := readPrefix(path, MaxRobotsBody+1)
		if err == nil && len(b) > MaxRobotsBody {
			err = fmt.Errorf("larger than %d octets", MaxRobotsBody)
		}
		return b, false, err
	}
}

// readPrefix reads at most n octets of a file.
func readPrefix(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// dirHistory reads a directory of dated versions.
func dirHistory(dir string) (*History, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("robots history: %w", err)
	}
	var vs []Version
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		from, err := VersionTime(e.Name())
		if err != nil {
			return nil, fmt.Errorf("robots history %s: %w", dir, err)
		}
		p := filepath.Join(dir, e.Name())
		vs = append(vs, Version{From: from, Source: p, load: fileLoader(p)})
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("robots history %s: no version files (want names such as 2026-11-20T00:00:00Z.txt)", dir)
	}
	return newHistory(vs)
}

// VersionTime reads the time a version file's name gives:
// "2026-11-20T00:00:00Z.txt" or "2026-11-20T00-00-00Z.txt" (RFC 3339 in
// UTC, "-" allowed for ":" as some file systems forbid ":"), the ".txt"
// optional.
func VersionTime(name string) (time.Time, error) {
	s := strings.TrimSuffix(name, ".txt")
	if len(s) == len("2026-11-20T00-00-00Z") && s[10] == 'T' && s[13] == '-' && s[16] == '-' {
		s = s[:13] + ":" + s[14:16] + ":" + s[17:]
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		return time.Time{}, fmt.Errorf("version file %q: want its UTC start time as its name, such as 2026-11-20T00:00:00Z.txt", name)
	}
	return t, nil
}
