package server

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestArchiveFetch: with audit.archive_dir set each fetch is archived, and
// the Access handed to the cache holds no copy of the body either way.
func TestArchiveFetch(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /\n")
	acc := policy.Access{Result: policy.Successful, URL: "http://a.example/robots.txt", Status: 200,
		FetchedAt: time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC), SHA256: sha256.Sum256(body), Raw: body}
	for _, dir := range []string{"", t.TempDir()} {
		cfg := config.Default()
		cfg.Audit.ArchiveDir = dir
		ar, err := openArchive(cfg, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		if (ar != nil) != (dir != "") {
			t.Fatalf("archive_dir %q: got archive %v, want one only when set", dir, ar)
		}
		got := archiveFetch(ar, acc, zerolog.Nop())
		if got.Raw != nil || got.SHA256 != acc.SHA256 {
			t.Errorf("archive_dir %q: got Raw %q, SHA256 %x; want no body kept, the hash kept", dir, got.Raw, got.SHA256)
		}
		if ar != nil {
			if records, bodies, _ := ar.Stats(); records != 1 || bodies != 1 {
				t.Errorf("archive: got %d records, %d bodies, want 1, 1", records, bodies)
			}
		}
	}
}
