package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net"
	"time"
)

// DefaultLeafValidity is how long a leaf certificate is valid after its
// signing time (NotBefore is signing time minus Backdate).
const DefaultLeafValidity = 7 * 24 * time.Hour

// LeafOptions configure CA.SignLeaf. The zero value is valid.
type LeafOptions struct {
	// Validity is the leaf lifetime after the signing time; default
	// DefaultLeafValidity (7 days). NotAfter is capped at the CA's NotAfter.
	Validity time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Rand supplies serial numbers; default crypto/rand.Reader.
	Rand io.Reader
}

func (o LeafOptions) withDefaults() LeafOptions {
	if o.Validity <= 0 {
		o.Validity = DefaultLeafValidity
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	return o
}

// SignLeaf signs a server certificate for host, uncached; most callers want
// Certs.Get instead. host may carry a port and may be an IPv4 or IPv6
// literal ("example.com", "Example.COM:443", "127.0.0.1:8443", "[::1]:443").
//
// The result holds a fresh ECDSA P-256 key and the chain leaf + CA. The
// leaf has SAN DNSName (lower-cased host) or IPAddress (IP literals),
// ExtKeyUsage ServerAuth, KeyUsage DigitalSignature, a 128-bit random
// serial, AuthorityKeyId = the CA's SubjectKeyId (x509.CreateCertificate
// copies it; CAs made by NewCA or Go's x509 always have one), and
// validity [now-Backdate, min(now+Validity, CA NotAfter)]. Errors wrap
// ErrInvalidHost for unusable hosts; signing fails when the CA has expired.
func (c *CA) SignLeaf(host string, opts LeafOptions) (*tls.Certificate, error) {
	t, err := parseTarget(host)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	return c.sign(t, opts.Now(), opts.Validity, opts.Rand)
}

// sign creates the leaf for an already validated target.
func (c *CA) sign(t target, now time.Time, validity time.Duration, rnd io.Reader) (*tls.Certificate, error) {
	notAfter := now.Add(validity)
	if notAfter.After(c.cert.NotAfter) {
		notAfter = c.cert.NotAfter
	}
	if !now.Before(notAfter) {
		return nil, fmt.Errorf("sign certificate for %s: CA certificate expired at %s",
			t.key, c.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	serial, err := randomSerial(rnd)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %s: %w", t.key, err)
	}
	tmpl := leafTemplate(t, now.Add(-Backdate), notAfter)
	tmpl.SerialNumber = serial
	key, err := ecdsa.GenerateKey(elliptic.P256(), rnd)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %s: generate key: %w", t.key, err)
	}
	der, err := x509.CreateCertificate(rnd, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %s: %w", t.key, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("sign certificate for %s: parse: %w", t.key, err)
	}
	return &tls.Certificate{
		Certificate: [][]byte{der, c.cert.Raw},
		PrivateKey:  key,
		Leaf:        leaf,
	}, nil
}

// leafTemplate is the certificate template for t without serial and keys.
func leafTemplate(t target, notBefore, notAfter time.Time) *x509.Certificate {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{Organization: []string{"robotsproxy"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if len(t.key) <= 64 { // RFC 5280 upper bound for CommonName
		tmpl.Subject.CommonName = t.key
	}
	if t.ip.IsValid() {
		tmpl.IPAddresses = []net.IP{t.ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{t.key}
	}
	return tmpl
}
