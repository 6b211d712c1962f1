package keyfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestModeError: a key the process owns is its alone; one another user
// owns (root, in a Kubernetes Secret volume) may be read by the file's
// group, never by others.
func TestModeError(t *testing.T) {
	for _, tc := range []struct {
		perm  fs.FileMode
		owned bool
		fix   string // "" when the mode is accepted
	}{
		{0o600, true, ""},
		{0o400, true, ""},
		{0o640, true, "chmod 600"},
		{0o440, true, "chmod 600"},
		{0o644, true, "chmod 600"},
		{0o604, true, "chmod 600"},
		{0o600, false, ""},
		{0o640, false, ""},
		{0o440, false, ""}, // the Helm chart's Secret volume: root-owned, fsGroup
		{0o660, false, "defaultMode: 0440"},
		{0o644, false, "defaultMode: 0440"}, // a Kubernetes Secret volume's default mode
		{0o444, false, "chmod 640"},
	} {
		err := ModeError("/k/ca-key.pem", tc.perm, tc.owned)
		switch {
		case tc.fix == "" && err != nil:
			t.Errorf("%#o owned %v: %v, want accepted", tc.perm, tc.owned, err)
		case tc.fix != "" && (err == nil || !strings.Contains(err.Error(), tc.fix) || !strings.Contains(err.Error(), "/k/ca-key.pem")):
			t.Errorf("%#o owned %v: %v, want an error naming the file and %q", tc.perm, tc.owned, err, tc.fix)
		}
	}
}

// TestCheckMode: a file the test creates is the process's own.
func TestCheckMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SKIPPED: file modes do not describe access on Windows")
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	for perm, ok := range map[fs.FileMode]bool{0o600: true, 0o400: true, 0o640: false, 0o644: false} {
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckMode(path, fi); (err == nil) != ok {
			t.Errorf("mode %#o: got %v, want accepted %v", perm, err, ok)
		}
	}
}
