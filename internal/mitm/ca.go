package mitm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
	"unicode"
)

// Defaults for CAOptions.
const (
	// DefaultCAValidity is how long a generated CA certificate is valid
	// after its signing time (ten years of 365 days).
	DefaultCAValidity = 10 * 365 * 24 * time.Hour
	// Backdate is how far NotBefore of generated CA and leaf certificates
	// lies before the signing time, to tolerate client clock skew.
	Backdate = time.Hour
	// maxCANameLen bounds CAOptions.Name so that the CommonName stays
	// within the 64-character limit of RFC 5280.
	maxCANameLen = 40
)

// CAOptions configure NewCA and InitCA. The zero value is valid.
type CAOptions struct {
	// Name is an optional operator label added to the CommonName:
	// "robotsproxy CA (Name)". At most 40 printable characters.
	Name string
	// Validity is the CA lifetime after the signing time; default
	// DefaultCAValidity (10 years). NotBefore is always now-Backdate.
	Validity time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Rand supplies the serial number; default crypto/rand.Reader. Since
	// Go 1.26 the standard library ignores custom readers for key
	// generation and signing, so keys are always securely random.
	Rand io.Reader
}

func (o CAOptions) withDefaults() CAOptions {
	if o.Validity == 0 {
		o.Validity = DefaultCAValidity
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	return o
}

// CA is a loaded or generated certificate authority: its certificate and
// the private key that signs leaf certificates. A CA is immutable and safe
// for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// NewCA generates a CA in memory: an ECDSA P-256 key and a self-signed
// certificate (CommonName "robotsproxy CA", Organization "robotsproxy",
// BasicConstraints CA:true with MaxPathLen 0, KeyUsage
// CertSign|CRLSign|DigitalSignature, a 128-bit random serial and a
// SubjectKeyId). It returns an error for invalid options or when the
// random source fails.
func NewCA(opts CAOptions) (*CA, error) {
	opts = opts.withDefaults()
	tmpl, err := caTemplate(opts)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), opts.Rand)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	pub, err := key.PublicKey.ECDH()
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	ski := sha256.Sum256(pub.Bytes()) // RFC 7093 method 1
	tmpl.SubjectKeyId = ski[:20]
	der, err := x509.CreateCertificate(opts.Rand, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse generated CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key}, nil
}

func caTemplate(opts CAOptions) (*x509.Certificate, error) {
	cn, err := caCommonName(opts.Name)
	if err != nil {
		return nil, err
	}
	if opts.Validity < 0 {
		return nil, fmt.Errorf("CA validity %v is negative", opts.Validity)
	}
	serial, err := randomSerial(opts.Rand)
	if err != nil {
		return nil, err
	}
	now := opts.Now()
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"robotsproxy"}},
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(opts.Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}, nil
}

func caCommonName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "robotsproxy CA", nil
	}
	if len(name) > maxCANameLen {
		return "", fmt.Errorf("CA name %q is longer than %d bytes", name, maxCANameLen)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("CA name %q contains a non-printable character", name)
		}
	}
	return "robotsproxy CA (" + name + ")", nil
}

// randomSerial returns a positive serial number made of 128 random bits.
func randomSerial(r io.Reader) (*big.Int, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, fmt.Errorf("read random serial: %w", err)
	}
	serial := new(big.Int).SetBytes(b[:])
	if serial.Sign() == 0 {
		return nil, errors.New("read random serial: random source returned only zeros")
	}
	return serial, nil
}

// Certificate returns the CA certificate. Callers must not modify it.
func (c *CA) Certificate() *x509.Certificate { return c.cert }

// CertPool returns a new pool holding only the CA certificate, for clients
// (and tests) that should trust intercepted connections.
func (c *CA) CertPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(c.cert)
	return pool
}

// CertPEM returns the CA certificate as one PEM "CERTIFICATE" block, the
// file clients import into their trust store.
func (c *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
}

// KeyPEM returns the CA private key as one PEM "PRIVATE KEY" (PKCS#8)
// block. The result is secret.
func (c *CA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return nil, fmt.Errorf("marshal CA key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Fingerprint returns the SHA-256 fingerprint of the CA certificate's DER
// encoding as 32 upper-case hex byte pairs separated by colons
// ("AB:CD:..."), the form browsers and openssl display.
func (c *CA) Fingerprint() string {
	sum := sha256.Sum256(c.cert.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}
