package verify

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

var day0 = time.Date(2026, 11, 22, 20, 10, 50, 123456789, time.UTC)

// archiveOf records a successful fetch of each body (by robots.txt URL)
// at at[URL] in a new archive, and returns its directory.
func archiveOf(t testing.TB, bodies map[string]string, at map[string]time.Time) (string, *audit.Archive) {
	t.Helper()
	dir := t.TempDir()
	a, err := audit.OpenArchive(audit.ArchiveOptions{Dir: dir, ParseLimit: 512 << 10, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	for url, body := range bodies {
		if err := a.Record(accessOf(url, body, at[url])); err != nil {
			t.Fatal(err)
		}
	}
	return dir, a
}

func accessOf(url, body string, at time.Time) policy.Access {
	return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, FetchedAt: at,
		SHA256: sha256.Sum256([]byte(body)), Raw: []byte(body), Header: http.Header{"Content-Type": {"text/plain"}}}
}

// bodyLine returns the audit line of a request for path decided by body,
// fetched from robotsURL at at, as the proxy logs it.
func bodyLine(robotsURL, body, path string, at time.Time) *auditLine {
	v, _ := policy.MatchPath(robots.Parse([]byte(body)), path)
	l := &auditLine{URL: strings.TrimSuffix(robotsURL, "/robots.txt") + path, Decision: "deny", Reason: string(auditlog.ReasonNoMatch), Group: v.Agent, StarFallback: v.Fallback,
		Access: string(policy.Successful), RobotsURL: robotsURL, RobotsFetchedAt: at.Format(time.RFC3339Nano)}
	if v.Allowed {
		l.Decision = "allow"
	}
	if v.Matched() {
		l.Reason, l.Rule, l.RuleLine = string(auditlog.ReasonRule), v.Rule.Text(), v.Rule.Line
	}
	s := sha256.Sum256([]byte(body))
	l.RobotsSHA256 = fmt.Sprintf("%x", s)
	return l
}

// TestDeciderListsEachDayOnce: the lines of many fetches on one day list
// that day's folder of the archive once; a fetch not in the listing lists
// it again only when the folder changed.
func TestDeciderListsEachDayOnce(t *testing.T) {
	const hosts = 40
	bodies, at := map[string]string{}, map[string]time.Time{}
	for h := range hosts {
		url := fmt.Sprintf("http://host%d.example/robots.txt", h)
		bodies[url] = fmt.Sprintf("User-agent: *\nDisallow: /private%d\n", h)
		at[url] = day0.Add(time.Duration(h) * time.Minute)
		if h%4 == 0 { // another day
			at[url] = at[url].Add(24 * time.Hour)
		}
	}
	dir, ar := archiveOf(t, bodies, at)
	old := time.Now().Add(-time.Hour) // the folders settled long ago
	for _, day := range []time.Time{day0, day0.Add(24 * time.Hour)} {
		if err := os.Chtimes(filepath.Join(dir, "records", day.Format("2006-01-02")), old, old); err != nil {
			t.Fatal(err)
		}
	}
	d := newDecider(dir, defaultBounds())
	listed := 0
	d.readDir = func(name string) ([]os.DirEntry, error) {
		listed++
		return os.ReadDir(name)
	}
	check := func(l *auditLine, wantKind Kind) {
		t.Helper()
		if kind, msg, err := d.check(l); err != nil || kind != wantKind {
			t.Errorf("check %s at %s: got %q (%s), %v, want %q", l.RobotsURL, l.RobotsFetchedAt, kind, msg, err, wantKind)
		}
	}
	for pass := range 2 {
		for url, body := range bodies {
			check(bodyLine(url, body, fmt.Sprintf("/page%d", pass), at[url]), "")
		}
	}
	if listed != 2 {
		t.Errorf("%d lines of %d fetches on 2 days: got %d listings, want 2", 2*hosts, hosts, listed)
	}
	// A fetch the archive does not hold: the settled folder is not listed again.
	absent := "http://absent.example/robots.txt"
	check(bodyLine(absent, bodies["http://host1.example/robots.txt"], "/", day0.Add(time.Second)), "")
	if listed != 2 {
		t.Errorf("a fetch not archived: got %d listings, want still 2", listed)
	}
	// The proxy archives it meanwhile: the folder changed, and is listed again.
	const late = "User-agent: *\nDisallow: /\n"
	if err := ar.Record(accessOf(absent, late, day0.Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	check(bodyLine(absent, late, "/x", day0.Add(2*time.Second)), "")
	if listed != 3 {
		t.Errorf("a fetch archived after the listing: got %d listings, want 3", listed)
	}
}

// TestDeciderKeepsNoBody: a body's octets are not kept once compiled.
func TestDeciderKeepsNoBody(t *testing.T) {
	const hosts = 8
	bodies, at := map[string]string{}, map[string]time.Time{}
	for h := range hosts {
		url := fmt.Sprintf("http://host%d.example/robots.txt", h)
		// About 2 MiB of comments each: the bodies kept would show.
		bodies[url] = fmt.Sprintf("User-agent: *\nDisallow: /private%d\n", h) + strings.Repeat(fmt.Sprintf("# %d padding padding\n", h), 100_000)
		at[url] = day0.Add(time.Duration(h) * time.Minute)
	}
	dir, _ := archiveOf(t, bodies, at)
	d := newDecider(dir, defaultBounds())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for url, body := range bodies {
		if kind, msg, err := d.check(bodyLine(url, body, "/private1/x", at[url])); err != nil || kind != "" {
			t.Fatalf("check %s: got %q (%s), %v, want it verified", url, kind, msg, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(d)
	runtime.KeepAlive(bodies)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d octets", grew)
	if grew > 4<<20 {
		t.Errorf("after %d bodies of 2 MiB: the decider holds %d octets, want at most 4 MiB (no body kept)", hosts, grew)
	}
}

// TestDeciderCachesAreBounded: each cache is cleared at its bound, and
// what was cleared is read again: every line still verifies.
func TestDeciderCachesAreBounded(t *testing.T) {
	const hosts = 8
	bodies, at := map[string]string{}, map[string]time.Time{}
	for h := range hosts {
		url := fmt.Sprintf("http://host%d.example/robots.txt", h)
		bodies[url] = fmt.Sprintf("User-agent: *\nDisallow: /private%d\n", h)
		at[url] = day0.Add(time.Duration(h) * 24 * time.Hour) // a day each
	}
	dir, _ := archiveOf(t, bodies, at)
	for _, bounds := range []cacheBounds{
		{days: 2, fetches: 3, bodies: 3, compiled: 3, octets: 1 << 20},
		{days: 1, fetches: 1, bodies: 1, compiled: 5, octets: 40}, // one compiled body at a time
	} {
		d := newDecider(dir, bounds)
		for pass := range 3 {
			for url, body := range bodies {
				if kind, msg, err := d.check(bodyLine(url, body, fmt.Sprintf("/private%d", pass), at[url])); err != nil || kind != "" {
					t.Fatalf("bounds %+v: check %s: got %q (%s), %v, want it verified", bounds, url, kind, msg, err)
				}
				if d.days.Len() > bounds.days || d.fetches.Len() > bounds.fetches || d.bodies.Len() > bounds.bodies ||
					d.compiled.Len() > bounds.compiled || d.compiled.Len() > 1 && d.compiled.Size() > int64(bounds.octets) {
					t.Fatalf("bounds %+v: got %d days, %d fetches, %d bodies, %d compiled of %d octets",
						bounds, d.days.Len(), d.fetches.Len(), d.bodies.Len(), d.compiled.Len(), d.compiled.Size())
				}
			}
		}
	}
}

// TestInternerSkipsLongValues: values over maxInternedLen are not kept.
func TestInternerSkipsLongValues(t *testing.T) {
	in := newInterner()
	for _, tt := range []struct {
		n    int
		kept bool
	}{{10, true}, {maxInternedLen, true}, {maxInternedLen + 1, false}, {maxLine, false}} {
		v := strings.Repeat("u", tt.n)
		got := in.String([]byte(v))
		if got != v {
			t.Fatalf("get of %d octets: got another string", tt.n)
		}
		if kept := unsafe.StringData(in.String([]byte(v))) == unsafe.StringData(got); kept != tt.kept {
			t.Errorf("get of %d octets: got kept %v, want %v", tt.n, kept, tt.kept)
		}
	}
}
