package verify_test

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

	"github.com/robotsproxy/robotsproxy/internal/access"
)

var t0 = time.Date(2026, 11, 22, 20, 10, 50, 123456789, time.UTC)

// fetched returns the Access of a successful fetch of url at t with body.
func fetched(url, body string, t time.Time) access.Access {
	return access.Access{Result: access.Successful, URL: url, FinalURL: url, Status: 200, FetchedAt: t,
		Duration: 3 * time.Millisecond, SHA256: sha256.Sum256([]byte(body)), Raw: []byte(body),
		Header: http.Header{"Content-Type": {"text/plain"}, "Etag": {`"v1"`}}}
}

func shaHex(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}

// swapBody replaces the archived body sha with another text.
func swapBody(t *testing.T, dir, sha, other string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(other))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "bodies", sha[:2], sha+".gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
