package mitm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

// TestTLSHandshake serves the TLSConfig for example.test over loopback and
// checks which clients complete the handshake.
func TestTLSHandshake(t *testing.T) {
	ca := mustCA(t, time.Now())
	certs := mustCerts(t, ca, CertsOptions{})
	tests := []struct {
		name       string
		roots      *x509.CertPool
		serverName string
		wantOK     bool
	}{
		{"trusting client", ca.CertPool(), "example.test", true},
		{"other CA", mustCA(t, time.Now()).CertPool(), "example.test", false},
		{"system roots only", nil, "example.test", false},
		{"wrong name", ca.CertPool(), "other.test", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := certs.TLSConfig("example.test:443", nil)
			if err != nil {
				t.Fatal(err)
			}
			state, clientErr := handshake(t, cfg, &tls.Config{RootCAs: tt.roots, ServerName: tt.serverName})
			if (clientErr == nil) != tt.wantOK {
				t.Fatalf("client handshake error %v, want success %v", clientErr, tt.wantOK)
			}
			if !tt.wantOK {
				return
			}
			peer := state.PeerCertificates
			if len(peer) != 2 || peer[0].DNSNames[0] != "example.test" || !peer[1].Equal(ca.Certificate()) {
				t.Errorf("peer chain %v", peer)
			}
			if len(state.VerifiedChains) == 0 {
				t.Error("no verified chain")
			}
		})
	}
}

// handshake runs a TLS handshake between a server using srv and a client
// using cli over a loopback TCP connection (kernel-buffered, so a client
// rejecting the certificate cannot deadlock the server as with net.Pipe)
// and returns the client's view.
func handshake(t *testing.T, srv, cli *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = tls.Server(conn, srv).HandshakeContext(ctx)
	}()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := tls.Client(conn, cli)
	err = client.HandshakeContext(ctx)
	conn.Close() // unblocks the server if the client rejected the certificate
	<-serverDone
	return client.ConnectionState(), err
}
