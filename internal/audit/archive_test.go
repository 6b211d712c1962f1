package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/audittest"
	"github.com/robotsproxy/robotsproxy/policy"
)

var t0 = time.Date(2026, 11, 22, 20, 10, 50, 123456789, time.UTC)

// files returns the slash-separated paths of the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func openArchive(t *testing.T, dir string, maxBytes int64, log *bytes.Buffer) *audit.Archive {
	t.Helper()
	a, err := audit.OpenArchive(audit.ArchiveOptions{Dir: dir, MaxBytes: maxBytes, ParseLimit: 512 << 10, Log: zerolog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestArchiveStoresEachBodyOnce(t *testing.T) {
	dir := t.TempDir()
	a := openArchive(t, dir, 0, &bytes.Buffer{})
	const body = "User-agent: *\nDisallow: /private\n"
	accesses := []policy.Access{
		audittest.Fetched("http://a.example/robots.txt", body, t0),
		audittest.Fetched("http://b.example/robots.txt", body, t0.Add(time.Second)),
		audittest.Fetched("http://a.example/robots.txt", "User-agent: *\nAllow: /\n", t0.Add(time.Hour)),
		{Result: policy.Unavailable, URL: "http://c.example/robots.txt", Status: 404, FetchedAt: t0},
		{Result: policy.Unreachable, URL: "http://d.example/robots.txt", Refused: true, FetchedAt: t0, Err: errors.New("refused")},
	}
	var wg sync.WaitGroup
	for _, acc := range accesses { // concurrently: Record is safe for it
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Record(acc); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got := files(t, dir)
	if n := countPrefix(got, "bodies/"); n != 2 {
		t.Errorf("got %d bodies, want 2 (one per distinct body): %v", n, got)
	}
	if n := countPrefix(got, "records/2026-11-22/"); n != 5 {
		t.Errorf("got %d records, want 5: %v", n, got)
	}
	b, err := audit.ReadBody(dir, audittest.SHAHex(body))
	if err != nil || string(b) != body {
		t.Errorf("ReadBody: got %q, %v, want %q", b, err, body)
	}
	names, err := audit.FindRecords(dir, "http://c.example/robots.txt", t0)
	if err != nil || len(names) != 1 || !strings.HasSuffix(names[0], "-none.json") {
		t.Fatalf("FindRecords(unavailable): got %v, %v, want one record without a body", names, err)
	}
	rec, err := audit.ReadRecord(dir, names[0])
	if err != nil || rec.Result != "unavailable" || rec.Status != 404 || rec.SHA256 != "" || !rec.FetchedAt.Equal(t0) {
		t.Errorf("unavailable record: got %+v, %v", rec, err)
	}
	names, _ = audit.RecordsOf(dir, audittest.SHAHex(body))
	if len(names) != 2 {
		t.Fatalf("RecordsOf: got %v, want the two fetches of the shared body", names)
	}
	rec, _ = audit.ReadRecord(dir, names[0])
	if rec.URL != "http://a.example/robots.txt" || rec.Header.Get("Etag") != `"v1"` || rec.Size != len(body) || rec.ParseLimit != 512<<10 {
		t.Errorf("record: got %+v", rec)
	}
}

// TestArchiveWritesAtomically: a crash leaves at most a file in tmp/,
// which the next OpenArchive removes; a write that fails leaves neither a
// temporary file nor a body without a record.
func TestArchiveWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	a := openArchive(t, dir, 0, &log)
	// A crash in the middle of a write: a half file in tmp/.
	if err := os.WriteFile(filepath.Join(dir, "tmp", "w-123"), []byte("half a rec"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = openArchive(t, dir, 0, &log)
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("after reopening: got files %v, want none", got)
	}
	if !strings.Contains(log.String(), "removed a file left half written") {
		t.Errorf("log: got %q, want the removal logged", log.String())
	}

	// The record's rename fails: its place is taken by a directory.
	acc := audittest.Fetched("http://a.example/robots.txt", "User-agent: *\nDisallow: /\n", t0)
	name := audit.RecordName(acc.URL, acc.FetchedAt, audittest.SHAHex(string(acc.Raw)))
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(name), "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(acc); err == nil {
		t.Fatal("Record: got no error, want the failed rename")
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("after a failed write: got files %v, want none: no temporary file, no body without a record", got)
	}
	if r, b, _ := a.Stats(); r != 0 || b != 0 {
		t.Errorf("Stats after a failed write: got %d records, %d bodies, want 0, 0", r, b)
	}
}

// TestArchivePrunesOldestFirst fills an archive past its bound: the oldest
// records go first, each logged, and a body goes with its last record.
func TestArchivePrunesOldestFirst(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	a := openArchive(t, dir, 4000, &log)
	shared := "User-agent: *\nDisallow: /shared\n"
	var bodies []string
	for i := range 12 {
		body := shared
		if i%3 == 0 {
			body = strings.Repeat("# padding\n", i) + "User-agent: *\nDisallow: /" + string(rune('a'+i)) + "\n"
		}
		bodies = append(bodies, body)
		at := t0.Add(time.Duration(i) * time.Hour)
		if err := a.Record(audittest.Fetched("http://h.example/robots.txt", body, at)); err != nil {
			t.Fatal(err)
		}
	}
	records, _, size := a.Stats()
	if size > 4000 || records == 0 || records == 12 {
		t.Fatalf("Stats: got %d records, %d octets, want some pruned to 4000 octets", records, size)
	}
	pruned := strings.Count(log.String(), "pruned the oldest fetch record")
	if pruned != 12-records {
		t.Errorf("got %d prune log lines, want %d (one per pruned record):\n%s", pruned, 12-records, log.String())
	}
	// The oldest are gone, the newest stay.
	for i, body := range bodies {
		names, _ := audit.FindRecords(dir, "http://h.example/robots.txt", t0.Add(time.Duration(i)*time.Hour))
		if kept := len(names) == 1; kept != (i >= 12-records) {
			t.Errorf("record %d: kept %v, want kept only for the newest %d", i, kept, records)
		}
		_, err := audit.ReadBody(dir, audittest.SHAHex(body))
		if i%3 == 0 && i < 12-records && !errors.Is(err, audit.ErrNotArchived) {
			t.Errorf("body of pruned record %d: got %v, want removed", i, err)
		}
	}
	if _, err := audit.ReadBody(dir, audittest.SHAHex(shared)); err != nil {
		t.Errorf("shared body: got %v, want kept while a record refers to it", err)
	}
	if !strings.Contains(log.String(), `"body_removed":true`) {
		t.Errorf("log: want a prune that removed its body:\n%s", log.String())
	}
	// Reopened, the index agrees with the files.
	b := openArchive(t, dir, 4000, &log)
	if r, _, s := b.Stats(); r != records || s != size {
		t.Errorf("reopened: got %d records, %d octets, want %d, %d", r, s, records, size)
	}
}

func TestShow(t *testing.T) {
	dir := t.TempDir()
	a := openArchive(t, dir, 0, &bytes.Buffer{})
	const body = "User-agent: *\nDisallow: /private\n"
	acc := audittest.Fetched("http://a.example/robots.txt", body, t0)
	acc.FinalURL = "https://a.example/robots.txt"
	for _, acc := range []policy.Access{acc, audittest.Fetched("http://b.example/robots.txt", body, t0.Add(time.Minute))} {
		if err := a.Record(acc); err != nil {
			t.Fatal(err)
		}
	}
	sha := audittest.SHAHex(body)
	for _, tt := range []struct {
		name, prefix string
		o            audit.ShowOptions
		want         []string
		err          error
	}{
		{"full", sha, audit.ShowOptions{}, []string{
			"sha256 " + sha + ", 33 octets, 2 fetch records\n",
			"2026-11-22T20:10:50.123456789Z http://a.example/robots.txt -> https://a.example/robots.txt status 200 successful in 3ms, parse limit 524288, Content-Type: \"text/plain\", Etag: \"\\\"v1\\\"\"\n",
			"2026-11-22T20:11:50.123456789Z http://b.example/robots.txt status 200",
			"--- body (33 octets) ---\n" + body}, nil},
		{"prefix", sha[:8], audit.ShowOptions{}, []string{"2 fetch records"}, nil},
		{"body only", sha, audit.ShowOptions{BodyOnly: true}, []string{body}, nil},
		{"unknown", strings.Repeat("0", 64), audit.ShowOptions{}, nil, audit.ErrNotArchived},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := audit.Show(&out, dir, tt.prefix, tt.o)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Show: got error %v, want %v", err, tt.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("got\n%s\nwant it to contain %q", out.String(), w)
				}
			}
			if tt.o.BodyOnly && out.String() != body {
				t.Errorf("-body: got %q, want the body only", out.String())
			}
		})
	}
	// A body changed in the archive is not shown.
	audittest.SwapBody(t, dir, sha, "User-agent: *\nAllow: /\n")
	if err := audit.Show(&bytes.Buffer{}, dir, sha, audit.ShowOptions{}); !errors.Is(err, audit.ErrAltered) {
		t.Errorf("Show of an altered body: got %v, want ErrAltered", err)
	}
}

// TestArchiveRecordsAFetchOnce: the same fetch recorded again (a shared
// result handed out with its original FetchedAt) is not written or
// counted again; the index agrees with a reopened archive.
func TestArchiveRecordsAFetchOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		acc    policy.Access
		bodies int
	}{
		{"body", audittest.Fetched("http://a.example/robots.txt", "User-agent: *\nDisallow: /x\n", t0), 1},
		{"no body", policy.Access{Result: policy.Unavailable, URL: "http://b.example/robots.txt", Status: 404, FetchedAt: t0}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a := openArchive(t, dir, 0, &bytes.Buffer{})
			for range 3 {
				if err := a.Record(tt.acc); err != nil {
					t.Fatal(err)
				}
			}
			records, bodies, size := a.Stats()
			if records != 1 || bodies != tt.bodies {
				t.Errorf("Stats: got %d records, %d bodies, want 1, %d", records, bodies, tt.bodies)
			}
			r, b, s := openArchive(t, dir, 0, &bytes.Buffer{}).Stats()
			if r != records || b != bodies || s != size {
				t.Errorf("Stats: got %d records, %d bodies, %d octets; reopened %d, %d, %d: want the same", records, bodies, size, r, b, s)
			}
			if got := files(t, dir); len(got) != 1+tt.bodies {
				t.Errorf("got files %v, want one record and %d bodies", got, tt.bodies)
			}
		})
	}
}

// TestArchiveCompressesNewBodiesOnly: recording a fetch of a body the
// archive holds (an unchanged robots.txt fetched again) does not compress
// it again: it allocates a small part of what compressing takes.
func TestArchiveCompressesNewBodiesOnly(t *testing.T) {
	a := openArchive(t, t.TempDir(), 0, &bytes.Buffer{})
	var body strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&body, "Disallow: /p%d/\n", i)
	}
	const n = 10
	acc := audittest.Fetched("http://a.example/robots.txt", body.String(), t0)
	allocated := func(from, count int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range count {
			acc.FetchedAt = t0.Add(time.Duration(from+i) * time.Second)
			if err := a.Record(acc); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / uint64(count)
	}
	first := allocated(0, 1) // the first fetch is compressed
	got := allocated(1, n)
	t.Logf("octets allocated per Record: %d with a new body, %d with an archived one", first, got)
	if got > 64<<10 {
		t.Errorf("recording a fetch of an archived %d-octet body allocated %d octets, want at most 64 KiB (no compression)", body.Len(), got)
	}
	if r, b, _ := a.Stats(); r != n+1 || b != 1 {
		t.Errorf("Stats: got %d records, %d bodies, want %d, 1", r, b, n+1)
	}
}

// TestReadRecordBounded: a record file over 1 MiB is not read whole.
func TestReadRecordBounded(t *testing.T) {
	dir := t.TempDir()
	a := openArchive(t, dir, 0, &bytes.Buffer{})
	acc := policy.Access{Result: policy.Unavailable, URL: "http://a.example/robots.txt", Status: 404, FetchedAt: t0}
	if err := a.Record(acc); err != nil {
		t.Fatal(err)
	}
	name := audit.RecordName(acc.URL, acc.FetchedAt, "")
	if rec, err := audit.ReadRecord(dir, name); err != nil || rec.Status != 404 {
		t.Fatalf("ReadRecord: got %+v, %v, want the record", rec, err)
	}
	big := `{"url":"http://a.example/robots.txt","status":404,"error":"` + strings.Repeat("x", 1<<20) + `"}`
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.ReadRecord(dir, name); err == nil || !strings.Contains(err.Error(), "larger than 1048576 octets") {
		t.Errorf("ReadRecord of a %d-octet record: got %v, want an error: larger than 1048576 octets", len(big), err)
	}
}
