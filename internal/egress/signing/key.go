// Package signing signs the requests robotsproxy forwards with HTTP
// Message Signatures (RFC 9421) as the Web Bot Auth protocol
// (draft-ietf-webbotauth-httpsig-protocol-01) asks: Ed25519 keys, named by
// their JWK SHA-256 thumbprint (RFC 7638, RFC 8037 appendix A.3), a
// Signature-Agent header naming the key directory, and the tag
// "web-bot-auth". Transport is the egress step that does it; keys are
// read from key directories written by GenerateKeyDir ("robotsproxy keys
// init DIR").
package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/keyfile"
)

// The files of a key directory.
const (
	// PrivateKeyFile holds the Ed25519 private key, PKCS#8 (RFC 5208,
	// RFC 8410) in a PEM "PRIVATE KEY" block, mode 0600.
	PrivateKeyFile = "private.pem"
	// PublicKeyFile holds the public key, PKIX (RFC 8410) in a PEM
	// "PUBLIC KEY" block.
	PublicKeyFile = "public.pem"
)

// Key is one Ed25519 signing key of an identity.
type Key struct {
	// ID is the key's JWK SHA-256 thumbprint (RFC 7638, RFC 8037 A.3),
	// base64url without padding: the signature's keyid parameter.
	ID string
	// Public is the public key.
	Public ed25519.PublicKey
	// Private is the private key, nil when only the public key is known
	// (a retired key kept in the directory so that older signatures
	// still verify).
	Private ed25519.PrivateKey
	// NotBefore and NotAfter bound the key's validity (the JWK's nbf and
	// exp); the zero Time means unbounded.
	NotBefore, NotAfter time.Time
}

// Thumbprint returns the JWK SHA-256 thumbprint of an Ed25519 public key
// (RFC 7638 section 3 over the required members crv, kty and x, in that
// order, as RFC 8037 appendix A.3 shows), base64url without padding.
func Thumbprint(pub ed25519.PublicKey) string {
	jwk := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(jwk))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// JWK returns the key's public JSON Web Key (RFC 8037 section 2): kty
// "OKP", crv "Ed25519", x, kid (ID), and nbf and exp as Unix seconds when
// the key's validity is bounded. It never holds the private key.
func (k *Key) JWK() map[string]any {
	m := map[string]any{
		"kty": "OKP",
		"crv": "Ed25519",
		"x":   base64.RawURLEncoding.EncodeToString(k.Public),
		"kid": k.ID,
	}
	if !k.NotBefore.IsZero() {
		m["nbf"] = k.NotBefore.Unix()
	}
	if !k.NotAfter.IsZero() {
		m["exp"] = k.NotAfter.Unix()
	}
	return m
}

// CanSign reports whether the key holds its private key.
func (k *Key) CanSign() bool { return len(k.Private) == ed25519.PrivateKeySize }

// GenerateKeyDir creates dir (mode 0700) when it does not exist and writes
// a new Ed25519 key pair from rand into it: PrivateKeyFile (mode 0600) and
// PublicKeyFile (mode 0644). It refuses to overwrite either file.
func GenerateKeyDir(dir string, rand io.Reader) (*Key, error) {
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("generate an Ed25519 key: %w", err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode the private key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode the public key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("key directory: %w", err)
	}
	privPath, pubPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s exists: not overwritten", p)
		}
	}
	if err := writeNew(privPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeNew(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		os.Remove(privPath)
		return nil, err
	}
	return &Key{ID: Thumbprint(pub), Public: pub, Private: priv}, nil
}

// writeNew writes data to a new file at path with mode perm, failing when
// the file exists.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// LoadKeyDir reads the key in dir. With PrivateKeyFile present (open to
// no one but who needs it: keyfile.CheckMode) the key can sign, and a
// PublicKeyFile beside it must match; with only PublicKeyFile the key is
// public only (Private nil). ValidityFile, when present, sets NotBefore
// and NotAfter. Errors name the file and what is wrong with
// it, never the key.
func LoadKeyDir(dir string) (*Key, error) {
	privPath, pubPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	var priv ed25519.PrivateKey
	switch fi, err := os.Stat(privPath); {
	case err == nil:
		if err := keyfile.CheckMode(privPath, fi); err != nil {
			return nil, err
		}
		if priv, err = readPrivate(privPath); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("key directory %s: %w", dir, err)
	}
	pub, err := readPublic(pubPath)
	switch {
	case err != nil && priv == nil:
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("key directory %s holds neither %s nor %s (robotsproxy keys init %s)", dir, PrivateKeyFile, PublicKeyFile, dir)
		}
		return nil, err
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case priv != nil:
		derived := priv.Public().(ed25519.PublicKey)
		if pub != nil && !pub.Equal(derived) {
			return nil, fmt.Errorf("%s does not match %s", pubPath, privPath)
		}
		pub = derived
	}
	k := &Key{ID: Thumbprint(pub), Public: pub, Private: priv}
	if err := readValidity(dir, k); err != nil {
		return nil, err
	}
	return k, nil
}

// readPrivate reads an Ed25519 private key in a PKCS#8 PEM file.
func readPrivate(path string) (ed25519.PrivateKey, error) {
	der, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKCS#8 private key", path)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want an Ed25519 key (Web Bot Auth signs with Ed25519 only)", path, k)
	}
	return priv, nil
}

// readPublic reads an Ed25519 public key in a PKIX PEM file.
func readPublic(path string) (ed25519.PublicKey, error) {
	der, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PKIX public key: %w", path, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want an Ed25519 key", path, k)
	}
	return pub, nil
}

// readPEM returns the DER of the one PEM block of type typ in the file at
// path, read through keyfile's bound.
func readPEM(path, typ string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err // fs.ErrNotExist is told apart by the callers
	}
	data, err := keyfile.Read(path, 1)
	if err != nil {
		return nil, err
	}
	b, rest := pem.Decode(data)
	if b == nil || b.Type != typ {
		return nil, fmt.Errorf("%s: want one PEM %q block", path, typ)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%s: data after the PEM %q block", path, typ)
	}
	return b.Bytes, nil
}
