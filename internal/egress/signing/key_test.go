package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestThumbprintRFC8037 checks the example of RFC 8037 appendix A.3.
func TestThumbprintRFC8037(t *testing.T) {
	x, err := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Thumbprint(ed25519.PublicKey(x)), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("Thumbprint = %s, want %s", got, want)
	}
}

func TestJWK(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	k := &Key{ID: Thumbprint(pub), Public: pub}
	m := k.JWK()
	if m["kty"] != "OKP" || m["crv"] != "Ed25519" || m["kid"] != k.ID || m["x"] != base64.RawURLEncoding.EncodeToString(pub) {
		t.Errorf("JWK = %v", m)
	}
	if _, ok := m["nbf"]; ok {
		t.Errorf("unbounded key has nbf: %v", m)
	}
	k.NotBefore, k.NotAfter = time.Unix(100, 0), time.Unix(200, 0)
	m = k.JWK()
	if m["nbf"] != int64(100) || m["exp"] != int64(200) {
		t.Errorf("bounded JWK = %v", m)
	}
	if _, ok := m["d"]; ok {
		t.Error("JWK holds the private key")
	}
}

func TestGenerateLoadKeyDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	k, err := GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, PrivateKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key file: %v, mode %v", err, fi.Mode())
	}
	got, err := LoadKeyDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || !got.Public.Equal(k.Public) || !got.Private.Equal(k.Private) || !got.CanSign() {
		t.Errorf("loaded %+v, want %+v", got, k)
	}
	if _, err := GenerateKeyDir(dir, rand.Reader); err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Errorf("second GenerateKeyDir: %v, want a refusal", err)
	}
	again, _ := LoadKeyDir(dir)
	if again.ID != k.ID {
		t.Error("the refused GenerateKeyDir changed the key")
	}
}

func TestLoadKeyDirErrors(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good")
	if _, err := GenerateKeyDir(good, rand.Reader); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, err := GenerateKeyDir(other, rand.Reader); err != nil {
		t.Fatal(err)
	}
	otherPub, _ := os.ReadFile(filepath.Join(other, PublicKeyFile))
	for _, tc := range []struct {
		name      string
		priv, pub []byte // nil: absent
		privMode  os.FileMode
		want      string // "" for success
		canSign   bool
	}{
		{"pair", read(PrivateKeyFile), read(PublicKeyFile), 0o600, "", true},
		{"private only", read(PrivateKeyFile), nil, 0o600, "", true},
		{"public only", nil, read(PublicKeyFile), 0, "", false},
		{"empty directory", nil, nil, 0, "neither", false},
		{"too open", read(PrivateKeyFile), read(PublicKeyFile), 0o644, "chmod 600", false},
		{"not PEM", []byte("garbage\n"), nil, 0o600, "PEM", false},
		{"public in private file", read(PublicKeyFile), nil, 0o600, "PEM", false},
		{"mismatch", read(PrivateKeyFile), otherPub, 0o600, "does not match", false},
		{"bad public", nil, []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), 0, "public key", false},
		{"oversized", bytes.Repeat([]byte("k"), 5000), nil, 0o600, "octets", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.priv != nil {
				if err := os.WriteFile(filepath.Join(dir, PrivateKeyFile), tc.priv, tc.privMode); err != nil {
					t.Fatal(err)
				}
				os.Chmod(filepath.Join(dir, PrivateKeyFile), tc.privMode)
			}
			if tc.pub != nil {
				if err := os.WriteFile(filepath.Join(dir, PublicKeyFile), tc.pub, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			k, err := LoadKeyDir(dir)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want an error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.CanSign() != tc.canSign || k.ID != Thumbprint(k.Public) {
				t.Errorf("got %+v, CanSign %v", k, k.CanSign())
			}
		})
	}
}
