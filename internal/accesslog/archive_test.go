package accesslog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// The proxy's robots.txt archive gives a history: a version per change of
// body, none for an unreachable fetch, everything allowed after a 404.
func TestArchiveHistory(t *testing.T) {
	dir := t.TempDir()
	a, err := audit.OpenArchive(audit.ArchiveOptions{Dir: dir, ParseLimit: 512 << 10, Log: zerolog.New(&bytes.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://example.org/robots.txt"
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	okAt := func(u, body string, at time.Time) policy.Access {
		return policy.Access{Result: policy.Successful, URL: u, FinalURL: u, Status: 200, FetchedAt: at,
			SHA256: sha256.Sum256([]byte(body)), Raw: []byte(body)}
	}
	ok := func(body string, at time.Time) policy.Access { return okAt(url, body, at) }
	for _, acc := range []policy.Access{
		ok("User-agent: *\nDisallow: /p\n", t0),
		ok("User-agent: *\nDisallow: /p\n", t0.Add(24*time.Hour)), // the same body: no new version
		{Result: policy.Unreachable, URL: url, FetchedAt: t0.Add(48 * time.Hour), Err: fmt.Errorf("timeout")},
		ok("User-agent: *\nDisallow: /q\n", t0.Add(72*time.Hour)),
		{Result: policy.Unavailable, URL: url, Status: 404, FetchedAt: t0.Add(96 * time.Hour)},
		okAt("https://other.example/robots.txt", "User-agent: *\nDisallow: /q\n", t0.Add(24*time.Hour)),
	} {
		if err := a.Record(acc); err != nil {
			t.Fatal(err)
		}
	}
	h, err := LoadHistory(context.Background(), "archive:"+dir+":"+url)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 || !h.Version(1).From.Equal(t0.Add(72*time.Hour)) {
		t.Fatalf("%d versions, the second from %v", h.Len(), h.Version(1).From)
	}
	log := line("2026-11-02T00:00:00Z", "1.2.3.4", "/p", "B/1") + // version 0 only: violation
		line("2026-11-05T12:00:00Z", "1.2.3.4", "/q", "B/1") + // versions 1 and 2 (none): disputable
		line("2026-11-07T00:00:00Z", "1.2.3.4", "/q", "B/1") // version 2 only: allowed
	r := judgeLog(t, h, log)
	if len(r.Violations) != 1 || len(r.Disputable) != 1 || r.Disputable[0].Line != 2 {
		t.Errorf("violations %+v disputable %+v", r.Violations, r.Disputable)
	}
	if _, err := LoadHistory(context.Background(), "archive:"+dir+":https://none.example/robots.txt"); err == nil {
		t.Error("a URL the archive never fetched: want an error")
	}
}
