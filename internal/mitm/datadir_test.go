package mitm

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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
		{"key readable by others", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, DataDirKey), key)
			write(t, filepath.Join(dir, DataDirCert), ca.CertPEM())
			if err := os.Chmod(filepath.Join(dir, DataDirKey), 0o644); err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS == "windows" {
				t.Skip("SKIPPED: file modes do not describe access on Windows")
			}
		}, "chmod 600"},
		{"not PEM", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, DataDirKey), key)
			write(t, filepath.Join(dir, DataDirCert), []byte("junk"))
		}, "ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			before := caFiles(dir)
			_, _, _, err := DataDirCA(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if after := caFiles(dir); len(after) != len(before) {
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

// caFiles lists the names in dir but the lock file, which stays once
// made.
func caFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.Name() != DataDirLock {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestDataDirCAConcurrent: callers that start together on a fresh
// directory (each with its own open lock file, as processes have) agree
// on one CA, created once; none sees half a pair.
func TestDataDirCAConcurrent(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		t.Skip("SKIPPED: no file lock on " + runtime.GOOS)
	}
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "state")
		const n = 8
		var wg sync.WaitGroup
		prints, errs, created := make([]string, n), make([]error, n), make([]bool, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ca, _, c, err := DataDirCA(dir)
				errs[i], created[i] = err, c
				if err == nil {
					prints[i] = ca.Fingerprint()
				}
			}()
		}
		close(start)
		wg.Wait()
		made := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, caller %d: %v", round, i, errs[i])
			}
			if prints[i] != prints[0] {
				t.Fatalf("round %d: callers got CAs %s and %s, want one", round, prints[0], prints[i])
			}
			if created[i] {
				made++
			}
		}
		if made != 1 {
			t.Fatalf("round %d: %d callers created a CA, want 1", round, made)
		}
	}
}

// TestLockDirWaits: a lock held elsewhere is waited for, at most the
// bound, and taken once released.
func TestLockDirWaits(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		t.Skip("SKIPPED: flock only")
	}
	path := filepath.Join(t.TempDir(), DataDirLock)
	unlock, err := lockDir(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(path, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a held lock: got %v, want an error naming %s once the wait is over", err, path)
	}
	time.AfterFunc(50*time.Millisecond, unlock)
	unlock2, err := lockDir(path, 10*time.Second)
	if err != nil {
		t.Fatalf("the lock released: %v", err)
	}
	unlock2()
}
