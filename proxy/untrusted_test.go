package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// serverHandshake runs a TLS server with a certificate for example.test
// signed by a fresh CA against client, and returns the server's error and
// whether it read the ClientHello.
func serverHandshake(t *testing.T, client *tls.Config) (hello bool, err error) {
	t.Helper()
	ca, err := mitm.NewCA(mitm.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := certs.TLSConfig("example.test:443", nil)
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Bool
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { read.Store(true); return nil, nil }
	sc, cc := net.Pipe()
	defer sc.Close()
	go func() {
		c := tls.Client(cc, client)
		_ = c.Handshake()
		c.Close()
	}()
	_ = sc.SetDeadline(time.Now().Add(10 * time.Second))
	err = tls.Server(sc, cfg).Handshake()
	return read.Load(), err
}

// TestRefusedCertificate: the handshake errors of a client that turns the
// certificate down are recognised; others are not.
func TestRefusedCertificate(t *testing.T) {
	hello1, untrusting := serverHandshake(t, &tls.Config{ServerName: "example.test", RootCAs: x509.NewCertPool()})
	hello2, oldClient := serverHandshake(t, &tls.Config{ServerName: "example.test", MaxVersion: tls.VersionTLS10})
	tests := []struct {
		name  string
		err   error
		hello bool
		want  bool
	}{
		{"Go client without the CA (bad_certificate)", untrusting, hello1, true},
		{"client that sends no ClientHello (only TLS 1.0)", oldClient, hello2, false},
		{"connection ended after the ClientHello", fmt.Errorf("read: %w", io.EOF), true, true},
		{"connection ended before it", fmt.Errorf("read: %w", io.EOF), false, false},
		{"connection reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true, true},
		{"undecryptable record", &net.OpError{Op: "local error", Err: errors.New("tls: bad record MAC")}, true, true},
		{"other local error", &net.OpError{Op: "local error", Err: errors.New("tls: unexpected message")}, true, false},
		{"nil", nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil && tt.want {
				t.Fatal("no handshake error")
			}
			if got := refusedCertificate(tt.err, tt.hello); got != tt.want {
				t.Errorf("refusedCertificate(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
