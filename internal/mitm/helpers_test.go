package mitm

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// t0 is a fixed instant with whole seconds (X.509 times have second
// precision), used wherever a test drives the clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// failingReader is a random source that always fails.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, os.ErrClosed }

// mustCA generates a CA valid at now.
func mustCA(t *testing.T, now time.Time) *CA {
	t.Helper()
	ca, err := NewCA(CAOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	return ca
}

// selfSignedCA builds a CA certificate for key with x509 directly, so tests
// can use key types and extensions NewCA does not produce.
func selfSignedCA(t *testing.T, key crypto.Signer, now time.Time, edit func(*x509.Certificate)) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	if edit != nil {
		edit(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("CreateCertificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("ParseCertificate: %v", err)
	}
	return cert
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8PEM(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("MarshalPKCS8PrivateKey: %v", err)
	}
	return pemBytes("PRIVATE KEY", der)
}

// writeFiles writes name->content files into dir and returns their paths.
func writeFiles(t *testing.T, dir string, files map[string][]byte) map[string]string {
	t.Helper()
	paths := make(map[string]string, len(files))
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// wantErr fails unless err is non-nil and contains every word.
func wantErr(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// verifyLeaf verifies cert's leaf for name against roots at now, as a TLS
// client would, and returns the verified chain.
func verifyLeaf(cert *x509.Certificate, roots *x509.CertPool, name string, now time.Time) ([][]*x509.Certificate, error) {
	return cert.Verify(x509.VerifyOptions{
		Roots:       roots,
		DNSName:     name,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}
