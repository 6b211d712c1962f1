package mitm

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"testing"
	"time"
)

func TestLoadCAErrors(t *testing.T) {
	ca := mustCA(t, t0)
	other := mustCA(t, t0)
	caKey, _ := ca.KeyPEM()
	otherKey, _ := other.KeyPEM()
	leaf, err := ca.SignLeaf("leaf.test", LeafOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	noCertSignKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	noCertSign := selfSignedCA(t, noCertSignKey, t0, func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageDigitalSignature })
	x25519, _ := ecdh.X25519().GenerateKey(rand.Reader)

	files := writeFiles(t, t.TempDir(), map[string][]byte{
		"ca.pem":            ca.CertPEM(),
		"ca-key.pem":        caKey,
		"other-key.pem":     otherKey,
		"garbage":           []byte("this is not PEM\n"),
		"leaf.pem":          pemBytes("CERTIFICATE", leaf.Certificate[0]),
		"leaf-key.pem":      pkcs8PEM(t, leaf.PrivateKey),
		"nocertsign.pem":    pemBytes("CERTIFICATE", noCertSign.Raw),
		"nocertsign-key":    pkcs8PEM(t, noCertSignKey),
		"encrypted-key.pem": pemBytes("ENCRYPTED PRIVATE KEY", []byte{1, 2, 3}),
		"x25519-key.pem":    pkcs8PEM(t, x25519),
		"openssh-key.pem":   pemBytes("OPENSSH PRIVATE KEY", []byte{1, 2, 3}),
		"bad-der-key.pem":   pemBytes("EC PRIVATE KEY", []byte{1, 2, 3}),
		"bad-der-cert.pem":  pemBytes("CERTIFICATE", []byte{1, 2, 3}),
	})
	missing := files["ca.pem"] + ".missing"
	caCert := ca.Certificate()
	tests := []struct {
		name      string
		cert, key string
		now       time.Time
		want      []string
	}{
		{"missing cert file", missing, files["ca-key.pem"], t0, []string{"read CA certificate", missing, "no such file"}},
		{"missing key file", files["ca.pem"], missing, t0, []string{"read CA key", missing, "no such file"}},
		{"garbage cert", files["garbage"], files["ca-key.pem"], t0, []string{files["garbage"], "no PEM \"CERTIFICATE\" block", "not PEM"}},
		{"garbage key", files["ca.pem"], files["garbage"], t0, []string{files["garbage"], "no PEM private key block", "not PEM"}},
		{"bad certificate DER", files["bad-der-cert.pem"], files["ca-key.pem"], t0, []string{files["bad-der-cert.pem"], "parse"}},
		{"bad key DER", files["ca.pem"], files["bad-der-key.pem"], t0, []string{files["bad-der-key.pem"], "parse EC PRIVATE KEY"}},
		{"swapped files", files["ca-key.pem"], files["ca.pem"], t0, []string{"found PRIVATE KEY", "swapped"}},
		{"leaf is not a CA", files["leaf.pem"], files["leaf-key.pem"], t0, []string{files["leaf.pem"], "leaf.test", "is not a CA", "BasicConstraints"}},
		{"CA without CertSign", files["nocertsign.pem"], files["nocertsign-key"], t0, []string{"is not a CA", "CertSign"}},
		{"mismatched key", files["ca.pem"], files["other-key.pem"], t0, []string{"does not match", files["other-key.pem"], files["ca.pem"]}},
		{"expired", files["ca.pem"], files["ca-key.pem"], caCert.NotAfter.Add(time.Second), []string{files["ca.pem"], "expired at", caCert.NotAfter.UTC().Format(time.RFC3339)}},
		{"not yet valid", files["ca.pem"], files["ca-key.pem"], caCert.NotBefore.Add(-time.Second), []string{files["ca.pem"], "not yet valid"}},
		{"encrypted key", files["ca.pem"], files["encrypted-key.pem"], t0, []string{"encrypted private keys are not supported"}},
		{"X25519 key", files["ca.pem"], files["x25519-key.pem"], t0, []string{"unsupported key type", "ecdh", "want ECDSA, RSA or Ed25519"}},
		{"OpenSSH key", files["ca.pem"], files["openssh-key.pem"], t0, []string{"unsupported PEM block type", "OPENSSH PRIVATE KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadCAAt(tt.cert, tt.key, tt.now)
			if got != nil {
				t.Errorf("got a CA with error %v", err)
			}
			wantErr(t, err, tt.want...)
		})
	}
	// Sanity: the valid pair loads at the edges of its validity.
	for _, now := range []time.Time{caCert.NotBefore, caCert.NotAfter} {
		if _, err := LoadCAAt(files["ca.pem"], files["ca-key.pem"], now); err != nil {
			t.Errorf("valid CA at %v: %v", now, err)
		}
	}
}

// TestLoadCAKeyEncodings loads CAs with every supported key type and
// encoding and checks each can sign a verifiable leaf.
func TestLoadCAKeyEncodings(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(ecKey)
	tests := []struct {
		name   string
		key    crypto.Signer
		keyPEM []byte
	}{
		{"ECDSA PKCS#8", ecKey, pkcs8PEM(t, ecKey)},
		// openssl ecparam -genkey writes EC PARAMETERS before the key.
		{"ECDSA SEC1 with EC PARAMETERS", ecKey, append(pemBytes("EC PARAMETERS", []byte{6, 5, 43, 129, 4, 0, 34}), pemBytes("EC PRIVATE KEY", sec1)...)},
		{"RSA PKCS#1", rsaKey, pemBytes("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))},
		{"RSA PKCS#8", rsaKey, pkcs8PEM(t, rsaKey)},
		{"Ed25519 PKCS#8", edKey, pkcs8PEM(t, edKey)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert := selfSignedCA(t, tt.key, t0, nil)
			dir := t.TempDir()
			files := writeFiles(t, dir, map[string][]byte{"ca.pem": pemBytes("CERTIFICATE", cert.Raw), "key.pem": tt.keyPEM})
			ca, err := LoadCAAt(files["ca.pem"], files["key.pem"], t0)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := ca.SignLeaf("example.test", LeafOptions{Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := verifyLeaf(leaf.Leaf, ca.CertPool(), "example.test", t0); err != nil {
				t.Errorf("leaf does not verify: %v", err)
			}
			if len(leaf.Leaf.AuthorityKeyId) == 0 {
				t.Error("leaf has no AuthorityKeyId")
			}
		})
	}
}

func TestParseCA(t *testing.T) {
	ca := mustCA(t, t0)
	keyPEM, _ := ca.KeyPEM()
	got, err := ParseCA(ca.CertPEM(), keyPEM, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprint() != ca.Fingerprint() {
		t.Error("fingerprint changed")
	}
	otherKey, _ := mustCA(t, t0).KeyPEM()
	_, err = ParseCA(ca.CertPEM(), otherKey, t0)
	wantErr(t, err, "does not match")
	_, err = ParseCA(ca.CertPEM(), keyPEM, t0.AddDate(11, 0, 0))
	wantErr(t, err, "expired")
}
