package signing

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A key's validity: written, read back into NotBefore/NotAfter and the
// JWK's nbf/exp; a key outside it neither passes Validate nor signs.
func TestKeyValidity(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	if _, err := GenerateKeyDir(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	nbf := time.Unix(1_800_000_000, 0)
	exp := nbf.Add(90 * 24 * time.Hour)
	if err := WriteValidity(dir, nbf, exp); err != nil {
		t.Fatal(err)
	}
	k, err := LoadKeyDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !k.NotBefore.Equal(nbf) || !k.NotAfter.Equal(exp) {
		t.Fatalf("validity %v..%v, want %v..%v", k.NotBefore, k.NotAfter, nbf, exp)
	}
	if j := k.JWK(); j["nbf"] != nbf.Unix() || j["exp"] != exp.Unix() {
		t.Errorf("JWK nbf %v exp %v, want %d %d", j["nbf"], j["exp"], nbf.Unix(), exp.Unix())
	}
	agent := &Agent{Keys: []*Key{k}, Active: k, URL: agentURL}
	s := &Settings{All: []*Agent{agent}}
	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"at nbf", nbf, true},
		{"inside", nbf.Add(time.Hour), true},
		{"before nbf", nbf.Add(-time.Second), false},
		{"at exp", exp, false},
		{"after exp", exp.Add(time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := k.ValidAt(tc.at); got != tc.ok {
				t.Errorf("ValidAt = %v, want %v", got, tc.ok)
			}
			if err := s.Validate(tc.at); (err == nil) != tc.ok {
				t.Errorf("Validate: %v, want ok %v", err, tc.ok)
			}
			req, _ := http.NewRequest("GET", "http://example.com/", nil)
			_, err := SignAt(req, agent, s, tc.at, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("SignAt: %v, want ok %v", err, tc.ok)
			}
			if !tc.ok && (req.Header.Get("Signature") != "" || !strings.Contains(err.Error(), "make another key active")) {
				t.Errorf("refused: Signature %q, error %v", req.Header.Get("Signature"), err)
			}
		})
	}
}

func TestKeyValidityErrors(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"not JSON", "{", "want {"},
		{"exp before nbf", `{"nbf":200,"exp":100}`, "do not bound"},
		{"negative", `{"exp":-1}`, "do not bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "key")
			if _, err := GenerateKeyDir(dir, rand.Reader); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ValidityFile), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadKeyDir(dir); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ValidityFile) {
				t.Errorf("LoadKeyDir: %v, want an error naming %s and %q", err, ValidityFile, tc.want)
			}
		})
	}
	if err := WriteValidity(t.TempDir(), time.Unix(100, 0), time.Unix(100, 0)); err == nil {
		t.Error("WriteValidity accepted exp == nbf")
	}
}
