package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestSharedRecordKeyFile: shared.record_key_file is read when the server
// starts; a file that is absent or too short stops it with an error
// naming the key and never showing the key, and the key never reaches
// the log.
func TestSharedRecordKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const secret = "s3cret-record-key-of-the-fleet\n"
	tests := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"absent", filepath.Join(dir, "absent"), true},
		{"empty", write("empty", ""), true},
		{"too short", write("short", "s3cret\n"), true},
		{"good", write("good", secret), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.AllowPrivate, cfg.AdminListen = true, ""
			cfg.Shared.RedisURL = "redis://127.0.0.1:1" // unreachable: starts degraded
			cfg.Shared.RecordKeyFile = tc.path
			log := &testkit.AuditSink{}
			_, err := New(cfg, &testkit.AuditSink{}, zerolog.New(log))
			if tc.wantErr != (err != nil) {
				t.Fatalf("New: got error %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "shared.record_key_file") || strings.Contains(err.Error(), "s3cret")) {
				t.Errorf("error %q: want it to name shared.record_key_file and not show the key", err)
			}
			logged := log.String()
			if strings.Contains(logged, "s3cret") {
				t.Errorf("the log shows the key: %s", logged)
			}
		})
	}
}
