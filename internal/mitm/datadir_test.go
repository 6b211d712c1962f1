package mitm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirCA: the first call creates the directory (0700) and the CA
// (key 0600); later calls load the same CA; a half-present pair or a bad
// file is an error that writes nothing.
func TestDataDirCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "robotsproxy")
	ca, certFile, created, err := DataDirCA(dir)
	if err != nil || !created || certFile != filepath.Join(dir, DataDirCert) {
		t.Fatalf("first DataDirCA: %v, created %v, cert %s", err, created, certFile)
	}
	for path, want := range map[string]os.FileMode{dir: DirMode, filepath.Join(dir, DataDirKey): KeyFileMode, certFile: CertFileMode} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	key, _ := os.ReadFile(filepath.Join(dir, DataDirKey))
	again, _, created, err := DataDirCA(dir)
	if err != nil || created || again.Fingerprint() != ca.Fingerprint() {
		t.Fatalf("second DataDirCA: %v, created %v, fingerprint %s, want %s", err, created, again.Fingerprint(), ca.Fingerprint())
	}
	if after, _ := os.ReadFile(filepath.Join(dir, DataDirKey)); !bytes.Equal(after, key) {
		t.Error("the key was rewritten")
	}

	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"key only", func(t *testing.T, dir string) { write(t, filepath.Join(dir, DataDirKey), key) }, "only one of"},
		{"cert only", func(t *testing.T, dir string) { write(t, filepath.Join(dir, DataDirCert), ca.CertPEM()) }, "only one of"},
		{"not PEM", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, DataDirKey), key)
			write(t, filepath.Join(dir, DataDirCert), []byte("junk"))
		}, "ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			before, _ := os.ReadDir(dir)
			_, _, _, err := DataDirCA(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if after, _ := os.ReadDir(dir); len(after) != len(before) {
				t.Errorf("files %v after the error, want %v", after, before)
			}
		})
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
