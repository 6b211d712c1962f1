package keyfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		min           int
		want          string // "" for an error
	}{
		{"trimmed", "  secret-key\n", 1, "secret-key"},
		{"at the minimum", "0123456789abcdef", 16, "0123456789abcdef"},
		{"under the minimum", "short\n", 16, ""},
		{"empty", "", 1, ""},
		{"blanks only", " \n\t", 1, ""},
		{"over the bound", strings.Repeat("k", MaxBytes+1), 1, ""},
		{"at the bound", strings.Repeat("k", MaxBytes), 1, strings.Repeat("k", MaxBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Read(path, tc.min)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Errorf("got %q, %v; want an error naming %s", got, err, path)
				}
				if k := strings.TrimSpace(tc.content); err != nil && k != "" && strings.Contains(err.Error(), k) {
					t.Errorf("error %q shows the key", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "absent"), 1); err == nil {
		t.Error("absent file: no error")
	}
}
