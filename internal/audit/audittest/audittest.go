// Package audittest holds the fixtures that the tests of the robots.txt
// archive (package audit), of the verifier (package verify) and of the
// audit commands share: a fetch to archive, its body's name, a way to
// alter an archived body as an intruder would, and a chained log with its
// archive. It is for tests only.
package audittest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Fetched returns the Access of a successful fetch (status 200, 3 ms) of
// url at t with body.
func Fetched(url, body string, t time.Time) policy.Access {
	return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, FetchedAt: t,
		Duration: 3 * time.Millisecond, SHA256: sha256.Sum256([]byte(body)), Raw: []byte(body),
		Header: http.Header{"Content-Type": {"text/plain"}, "Etag": {`"v1"`}}}
}

// SHAHex returns the SHA-256 of body in lower-case hex: the name the
// archive keeps it under.
func SHAHex(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}

// SwapBody replaces the body archived under sha in the archive dir with
// another text, gzipped as the archive keeps bodies.
func SwapBody(t testing.TB, dir, sha, other string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(other))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "bodies", sha[:2], sha+".gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ChainedLog writes an archive with one robots.txt and a chained log of
// two decisions made on it; it returns the archive, the log and the body's
// SHA-256 in hex.
func ChainedLog(t testing.TB) (archive, log, sha string) {
	t.Helper()
	dir := t.TempDir()
	archive, log = filepath.Join(dir, "archive"), filepath.Join(dir, "audit.log")
	body := "User-agent: examplebot\nDisallow: /private\n"
	sum := sha256.Sum256([]byte(body))
	sha = hex.EncodeToString(sum[:])
	at := time.Date(2026, 11, 22, 20, 10, 50, 123456789, time.UTC)
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: archive, ParseLimit: 512 << 10, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ar.Record(policy.Access{Result: policy.Successful, URL: "http://a.example/robots.txt", Status: 200,
		FetchedAt: at, SHA256: sum, Raw: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	f, prev, err := audit.OpenFile(audit.FileOptions{Path: log})
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(f, audit.Options{Chain: true, Prev: prev})
	common := `"candidates":["ExampleBot"],"robots_url":"http://a.example/robots.txt","group":"examplebot","star_fallback":false,`
	tail := fmt.Sprintf(`"access_result":"successful","robots_status":200,"robots_sha256":%q,"robots_fetched_at":"2026-11-22T20:10:50.123456789Z","status":%%d}`+"\n", sha)
	for _, l := range []string{
		`{"method":"GET","url":"http://a.example/private/x","decision":"deny","reason":"rule",` + common + `"rule":"Disallow: /private","rule_line":2,` + fmt.Sprintf(tail, 403),
		`{"method":"GET","url":"http://a.example/public","decision":"allow","reason":"no-matching-rule",` + common + fmt.Sprintf(tail, 200),
	} {
		if _, err := w.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return archive, log, sha
}
