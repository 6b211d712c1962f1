package mitm

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestSignLeafVerifies(t *testing.T) {
	ca := mustCA(t, t0)
	other := mustCA(t, t0)
	opts := LeafOptions{Now: func() time.Time { return t0 }}
	tests := []struct {
		host   string
		verify string // name a client verifies
		dns    string // expected DNS SAN, or ""
		ip     string // expected IP SAN, or ""
	}{
		{"example.test", "example.test", "example.test", ""},
		{"Example.TEST:443", "example.test", "example.test", ""},
		{"www.example.test.", "www.example.test", "www.example.test", ""},
		{"under_score.example.test:8443", "under_score.example.test", "under_score.example.test", ""},
		{"localhost", "localhost", "localhost", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"127.0.0.1", "127.0.0.1", "", "127.0.0.1"},
		{"192.0.2.7:8443", "192.0.2.7", "", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7", "", "192.0.2.7"},
		{"[::1]:443", "::1", "", "::1"},
		{"[::1]", "::1", "", "::1"},
		{"::1", "::1", "", "::1"},
		{"[2001:DB8::1]:443", "2001:db8::1", "", "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			cert, err := ca.SignLeaf(tt.host, opts)
			if err != nil {
				t.Fatal(err)
			}
			leaf := cert.Leaf
			chains, err := verifyLeaf(leaf, ca.CertPool(), tt.verify, t0)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if len(chains) != 1 || len(chains[0]) != 2 || !chains[0][1].Equal(ca.Certificate()) {
				t.Errorf("chain %v does not end at the CA", chains)
			}
			if _, err := verifyLeaf(leaf, other.CertPool(), tt.verify, t0); err == nil {
				t.Error("leaf verifies against a different CA")
			}
			if _, err := verifyLeaf(leaf, ca.CertPool(), "other.test", t0); err == nil {
				t.Error("leaf verifies for other.test")
			}
			checkSANs(t, leaf, tt.dns, tt.ip)
			checkLeafFields(t, ca, cert.Certificate, leaf)
			if k, ok := cert.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() || !k.PublicKey.Equal(leaf.PublicKey) {
				t.Errorf("private key %T is not the leaf's P-256 key", cert.PrivateKey)
			}
		})
	}
}

func checkSANs(t *testing.T, leaf *x509.Certificate, dns, ip string) {
	t.Helper()
	var wantDNS []string
	if dns != "" {
		wantDNS = []string{dns}
	}
	if strings.Join(leaf.DNSNames, ",") != strings.Join(wantDNS, ",") {
		t.Errorf("DNSNames = %q, want %q", leaf.DNSNames, wantDNS)
	}
	switch {
	case ip == "" && len(leaf.IPAddresses) != 0:
		t.Errorf("IPAddresses = %v, want none", leaf.IPAddresses)
	case ip != "" && (len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP(ip))):
		t.Errorf("IPAddresses = %v, want [%s]", leaf.IPAddresses, ip)
	}
}

func checkLeafFields(t *testing.T, ca *CA, chain [][]byte, leaf *x509.Certificate) {
	t.Helper()
	if len(chain) != 2 || !bytes.Equal(chain[1], ca.Certificate().Raw) {
		t.Errorf("served chain has %d certificates, want leaf + CA", len(chain))
	}
	if leaf.IsCA {
		t.Error("leaf is a CA")
	}
	if len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("ExtKeyUsage = %v, want [ServerAuth]", leaf.ExtKeyUsage)
	}
	if !bytes.Equal(leaf.AuthorityKeyId, ca.Certificate().SubjectKeyId) {
		t.Errorf("AuthorityKeyId %x != CA SubjectKeyId %x", leaf.AuthorityKeyId, ca.Certificate().SubjectKeyId)
	}
	if !leaf.NotBefore.Equal(t0.Add(-time.Hour)) || !leaf.NotAfter.Equal(t0.Add(7*24*time.Hour)) {
		t.Errorf("validity [%v, %v], want [t0-1h, t0+7d]", leaf.NotBefore, leaf.NotAfter)
	}
	if leaf.SerialNumber.Sign() <= 0 || leaf.SerialNumber.BitLen() > 128 {
		t.Errorf("serial %v", leaf.SerialNumber)
	}
}

func TestSignLeafInvalidHost(t *testing.T) {
	ca := mustCA(t, t0)
	tests := []struct{ host, want string }{
		{"", "empty host"},
		{":443", "empty host"},
		{"[]:443", "empty host"},
		{".", "empty label"},
		{"a..b", "empty label"},
		{"exa mple.test", "contains ' '"},
		{"*.example.test", "contains '*'"},
		{"bücher.example", "punycode"},
		{"-bad.example", "starts or ends with '-'"},
		{"bad-.example", "starts or ends with '-'"},
		{strings.Repeat("a", 64) + ".test", "longer than 63"},
		{strings.Repeat("a.", 127) + "ab", "longer than 253"},
		{"256.1.1.1", "numeric last label"},
		{"1.2.3", "numeric last label"},
		{"fe80::1%eth0", "zone"},
		{"[fe80::1%25eth0]:443", "zone"},
		{"[example.test]:443", "brackets"},
		{"example.test:99999", "bad port"},
		{"example.test:http", "bad port"},
		{"example.test:443:1", "contains ':'"}, // neither host:port nor an IP
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			cert, err := ca.SignLeaf(tt.host, LeafOptions{Now: func() time.Time { return t0 }})
			if cert != nil {
				t.Fatal("got a certificate")
			}
			if !errors.Is(err, ErrInvalidHost) {
				t.Errorf("error %v does not wrap ErrInvalidHost", err)
			}
			wantErr(t, err, "invalid host", tt.want)
		})
	}
}

func TestSignLeafCappedByCA(t *testing.T) {
	ca, err := NewCA(CAOptions{Now: func() time.Time { return t0 }, Validity: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	caEnd := ca.Certificate().NotAfter
	cert, err := ca.SignLeaf("example.test", LeafOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if !cert.Leaf.NotAfter.Equal(caEnd) {
		t.Errorf("leaf NotAfter %v, want CA NotAfter %v", cert.Leaf.NotAfter, caEnd)
	}
	_, err = ca.SignLeaf("example.test", LeafOptions{Now: func() time.Time { return caEnd }})
	wantErr(t, err, "CA certificate expired")
}
