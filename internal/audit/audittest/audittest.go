// Package audittest holds the fixtures that the tests of the robots.txt
// archive (package audit) and of the verifier (package verify) share: a
// fetch to archive, its body's name, and a way to alter an archived body
// as an intruder would. It is for tests only.
package audittest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

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
