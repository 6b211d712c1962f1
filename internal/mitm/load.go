package mitm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/keyfile"
)

// LoadCA reads a CA certificate and its private key from PEM files and
// validates them against the current time; see LoadCAAt.
func LoadCA(certFile, keyFile string) (*CA, error) {
	return LoadCAAt(certFile, keyFile, time.Now())
}

// LoadCAAt reads a CA from certFile (the first PEM "CERTIFICATE" block) and
// keyFile (a PEM "PRIVATE KEY" PKCS#8, "RSA PRIVATE KEY" PKCS#1 or
// "EC PRIVATE KEY" SEC1 block holding an ECDSA, RSA or Ed25519 key) and
// validates them as of now. Errors name the offending file and say what is
// wrong: the file is unreadable, the key file is open to others than who
// needs it (keyfile.CheckMode: chmod 600), holds no suitable PEM block, does not
// parse, the certificate is not a CA (BasicConstraints CA:false or no
// CertSign key usage), is expired or not yet valid at now, the key type is
// unsupported or encrypted, or the key does not match the certificate.
func LoadCAAt(certFile, keyFile string, now time.Time) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("read CA certificate %s: %w", certFile, err)
	}
	keyPEM, err := readKey(keyFile)
	if err != nil {
		return nil, err
	}
	cert, err := parseCACert(certPEM, now)
	if err != nil {
		return nil, fmt.Errorf("CA certificate %s: %w", certFile, err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key %s: %w", keyFile, err)
	}
	if !keyMatches(cert, key) {
		return nil, fmt.Errorf("CA key %s does not match certificate %s (different public key)", keyFile, certFile)
	}
	return &CA{cert: cert, key: key}, nil
}

// readKey reads the CA key file after checking who may read it
// (keyfile.CheckMode): the key can impersonate every site to every client
// that trusts the CA.
func readKey(keyFile string) ([]byte, error) {
	f, err := os.Open(keyFile)
	if err != nil {
		return nil, fmt.Errorf("read CA key %s: %w", keyFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read CA key %s: %w", keyFile, err)
	}
	if err := keyfile.CheckMode(keyFile, fi); err != nil {
		return nil, fmt.Errorf("CA key %w; whoever can read it can impersonate every site to every client that trusts the CA", err)
	}
	keyPEM, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read CA key %s: %w", keyFile, err)
	}
	return keyPEM, nil
}

// ParseCA is LoadCAAt for PEM data already in memory; errors have the same
// wording without file names.
func ParseCA(certPEM, keyPEM []byte, now time.Time) (*CA, error) {
	cert, err := parseCACert(certPEM, now)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	if !keyMatches(cert, key) {
		return nil, errors.New("CA key does not match certificate (different public key)")
	}
	return &CA{cert: cert, key: key}, nil
}

// parseCACert decodes the first CERTIFICATE block and checks that it is a
// CA that may sign certificates and is valid at now.
func parseCACert(data []byte, now time.Time) (*x509.Certificate, error) {
	block := findBlock(data, func(t string) bool { return t == "CERTIFICATE" })
	if block == nil {
		return nil, fmt.Errorf("no PEM \"CERTIFICATE\" block found%s", foundTypes(data))
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	name := cert.Subject.String()
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA (BasicConstraints CA:false or missing)", name)
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("certificate %q is not a CA (KeyUsage lacks CertSign)", name)
	}
	if now.Before(cert.NotBefore) {
		return nil, fmt.Errorf("certificate %q is not yet valid: NotBefore %s is after now %s",
			name, cert.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if now.After(cert.NotAfter) {
		return nil, fmt.Errorf("certificate %q expired at %s (now %s)",
			name, cert.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return cert, nil
}

// parseKey decodes the first private-key block in any supported encoding.
func parseKey(data []byte) (crypto.Signer, error) {
	block := findBlock(data, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") })
	if block == nil {
		return nil, fmt.Errorf("no PEM private key block found%s", foundTypes(data))
	}
	if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "" {
		return nil, errors.New("encrypted private keys are not supported; decrypt the key first")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("unsupported PEM block type %q (want PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	default:
		return nil, fmt.Errorf("unsupported key type %T (want ECDSA, RSA or Ed25519)", key)
	}
}

// keyMatches reports whether key is the private half of cert's public key.
func keyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}

// findBlock returns the first PEM block whose type satisfies want.
func findBlock(data []byte, want func(string) bool) *pem.Block {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil
		}
		if want(block.Type) {
			return block
		}
	}
}

// foundTypes describes the PEM blocks present, as a hint for error
// messages (" (found PRIVATE KEY; ...)"), or notes that there are none.
func foundTypes(data []byte) string {
	var types []string
	swapped := false
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		types = append(types, block.Type)
		swapped = swapped || block.Type == "CERTIFICATE" || strings.HasSuffix(block.Type, "PRIVATE KEY")
	}
	if len(types) == 0 {
		return " (the file is not PEM)"
	}
	hint := ""
	if swapped {
		hint = "; are the certificate and key files swapped?"
	}
	return " (found " + strings.Join(types, ", ") + hint + ")"
}
