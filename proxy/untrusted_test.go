package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
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

// recordingLogger is a goproxy.Logger that keeps what it is given.
type recordingLogger struct{ lines []string }

func (r *recordingLogger) Printf(format string, v ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, v...))
}

// TestGoproxyLog: goproxy's warning about a refused certificate goes to
// OnUntrusted with the client noted for its session; everything else,
// and a session without a noted client, goes to goproxy's own logger.
func TestGoproxyLog(t *testing.T) {
	next := &recordingLogger{}
	type call struct {
		client netip.Addr
		host   string
	}
	var calls []call
	l := &goproxyLog{next: next, untrusted: func(c netip.Addr, host string, _ error) { calls = append(calls, call{c, host}) }}
	client := netip.MustParseAddr("192.0.2.7")
	hs := &handshake{client: client}
	hs.hello.Store(true)
	l.clients.Store(int64(5), hs)
	refused := &net.OpError{Op: "remote error", Err: errors.New("tls: unknown certificate authority")}

	l.Printf("[%03d] WARN: Cannot handshake client %v %v\n", int64(5), "example.test:443", refused)
	l.Printf("[%03d] WARN: Cannot handshake client %v %v\n", int64(5), "example.test:443", refused) // not noted any more
	l.Printf("[%03d] WARN: Cannot handshake client %v %v\n", int64(6), "example.test:443", errors.New("tls: no cipher"))
	l.Printf("[%03d] WARN: Error copying to client: %s\n", int64(7), "x")

	if len(calls) != 1 || calls[0] != (call{client, "example.test:443"}) {
		t.Errorf("OnUntrusted calls %v, want one for %v example.test:443", calls, client)
	}
	if len(next.lines) != 3 || !strings.Contains(next.lines[2], "Error copying") {
		t.Errorf("goproxy's logger got %q, want the three other lines", next.lines)
	}
}
