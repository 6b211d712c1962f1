package mitm

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewCA(t *testing.T) {
	ca, err := NewCA(CAOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	// Parse the PEM output back rather than trusting the in-memory value.
	block, rest := pem.Decode(ca.CertPEM())
	if block == nil || block.Type != "CERTIFICATE" || len(rest) != 0 {
		t.Fatalf("CertPEM is not exactly one CERTIFICATE block: %q", ca.CertPEM())
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"IsCA", cert.IsCA && cert.BasicConstraintsValid},
		{"MaxPathLen 0", cert.MaxPathLen == 0 && cert.MaxPathLenZero},
		{"KeyUsage", cert.KeyUsage == x509.KeyUsageCertSign|x509.KeyUsageCRLSign|x509.KeyUsageDigitalSignature},
		{"SubjectKeyId", len(cert.SubjectKeyId) == 20},
		{"CommonName", cert.Subject.CommonName == "robotsproxy CA"},
		{"Organization", len(cert.Subject.Organization) == 1 && cert.Subject.Organization[0] == "robotsproxy"},
		{"NotBefore now-1h", cert.NotBefore.Equal(t0.Add(-time.Hour))},
		{"NotAfter now+10y", cert.NotAfter.Equal(t0.Add(10 * 365 * 24 * time.Hour))},
		{"serial positive, <=128 bits", cert.SerialNumber.Sign() > 0 && cert.SerialNumber.BitLen() <= 128},
		{"serial has >64 bits", cert.SerialNumber.BitLen() > 64}, // fails with probability 2^-64
		{"signature ECDSA-SHA256", cert.SignatureAlgorithm == x509.ECDSAWithSHA256},
		{"self-signed", cert.CheckSignatureFrom(cert) == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: wrong in %+v", c.name, cert)
		}
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", cert.PublicKey)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil || kb.Type != "PRIVATE KEY" {
		t.Fatalf("KeyPEM is not a PRIVATE KEY block: %q", keyPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := key.(*ecdsa.PrivateKey); !ok || !k.PublicKey.Equal(pub) {
		t.Errorf("key %T does not match the certificate", key)
	}
	if fp := ca.Fingerprint(); len(fp) != 32*3-1 || strings.ToUpper(fp) != fp {
		t.Errorf("Fingerprint = %q", fp)
	}
}

func TestNewCAOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    CAOptions
		wantCN  string
		wantErr []string
	}{
		{name: "default name", wantCN: "robotsproxy CA"},
		{name: "operator name", opts: CAOptions{Name: " acme crawler "}, wantCN: "robotsproxy CA (acme crawler)"},
		{name: "name too long", opts: CAOptions{Name: strings.Repeat("x", 41)}, wantErr: []string{"CA name", "longer than 40"}},
		{name: "control character", opts: CAOptions{Name: "a\x00b"}, wantErr: []string{"CA name", "non-printable"}},
		{name: "negative validity", opts: CAOptions{Validity: -time.Hour}, wantErr: []string{"CA validity", "negative"}},
		{name: "random source fails", opts: CAOptions{Rand: failingReader{}}, wantErr: []string{"random serial"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, err := NewCA(tt.opts)
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cn := ca.Certificate().Subject.CommonName; cn != tt.wantCN {
				t.Errorf("CommonName = %q, want %q", cn, tt.wantCN)
			}
		})
	}
}

func TestInitCA(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	ca, err := InitCA(certFile, keyFile, CAOptions{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		mode fs.FileMode
	}{{keyFile, 0o600}, {certFile, 0o644}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != f.mode {
			t.Errorf("%s: mode %v, want %v", f.path, got, f.mode)
		}
	}
	loaded, err := LoadCA(certFile, keyFile)
	if err != nil {
		t.Fatalf("LoadCA of InitCA output: %v", err)
	}
	if !bytes.Equal(loaded.Certificate().Raw, ca.Certificate().Raw) || loaded.Fingerprint() != ca.Fingerprint() {
		t.Error("loaded CA differs from the generated one")
	}
	if !loaded.Certificate().IsCA || loaded.Certificate().Subject.CommonName != "robotsproxy CA (test)" {
		t.Errorf("loaded certificate: %+v", loaded.Certificate().Subject)
	}
	if _, ok := loaded.key.(*ecdsa.PrivateKey); !ok {
		t.Errorf("key type %T, want *ecdsa.PrivateKey", loaded.key)
	}
	assertOnlyFiles(t, dir, "ca-key.pem", "ca.pem")
}

func TestInitCARefuses(t *testing.T) {
	const old = "old content"
	tests := []struct {
		name     string
		existing []string // files present before InitCA
		cert     string
		key      string
		want     []string
	}{
		{name: "cert exists", existing: []string{"ca.pem"}, cert: "ca.pem", key: "key.pem", want: []string{"ca.pem", "already exists", "refusing to overwrite"}},
		{name: "key exists", existing: []string{"key.pem"}, cert: "ca.pem", key: "key.pem", want: []string{"key.pem", "already exists", "refusing to overwrite"}},
		{name: "both exist", existing: []string{"ca.pem", "key.pem"}, cert: "ca.pem", key: "key.pem", want: []string{"already exists"}},
		{name: "same file", cert: "ca.pem", key: "ca.pem", want: []string{"different files", "ca.pem"}},
		{name: "empty name", cert: "ca.pem", want: []string{"must not be empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range tt.existing {
				writeFiles(t, dir, map[string][]byte{name: []byte(old)})
			}
			path := func(name string) string {
				if name == "" {
					return ""
				}
				return filepath.Join(dir, name)
			}
			_, err := InitCA(path(tt.cert), path(tt.key), CAOptions{})
			wantErr(t, err, tt.want...)
			for _, name := range tt.existing {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != old {
					t.Errorf("%s was modified: %q", name, b)
				}
			}
			assertOnlyFiles(t, dir, tt.existing...)
		})
	}
}

// TestInitCANoPartialFiles makes the second write (the certificate) fail
// after the key was written and checks the key is removed again.
func TestInitCANoPartialFiles(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	certFile := filepath.Join(dir, "missing-dir", "ca.pem")
	_, err := InitCA(certFile, keyFile, CAOptions{})
	wantErr(t, err, "write CA certificate", certFile)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	assertOnlyFiles(t, dir) // no key file, no temporary file
}

func TestWriteNewFileExisting(t *testing.T) {
	dir := t.TempDir()
	p := writeFiles(t, dir, map[string][]byte{"f": []byte("old")})["f"]
	err := writeNewFile(p, []byte("new"), 0o644)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("file overwritten: %q", b)
	}
	assertOnlyFiles(t, dir, "f")
	wantErr(t, writeExclusive(p, []byte("new"), 0o644), "exists")
}

// assertOnlyFiles fails unless dir holds exactly the named files.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string]bool)
	for _, n := range names {
		want[n] = true
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("unexpected file %s in %s", e.Name(), dir)
		}
		delete(want, e.Name())
	}
	for n := range want {
		t.Errorf("missing file %s in %s", n, dir)
	}
}
