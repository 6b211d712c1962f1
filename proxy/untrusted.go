package proxy

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// refusedCertificate reports whether err, from the client-side handshake
// of an intercepted tunnel, says the client turned the proxy's certificate
// down. A client that does not trust the CA ends the handshake right after
// the server's certificate, in one of these ways:
//
//   - a TLS alert (RFC 8446 6.2): unknown_ca (OpenSSL clients under TLS
//     1.2), bad_certificate (Go's client) or certificate_unknown;
//     crypto/tls reports it as a *net.OpError "remote error" around its
//     alert, whose type is not exported, so its text is compared;
//   - under TLS 1.3, OpenSSL clients (curl, Python, Scrapy) send their
//     alert in a record the server cannot decrypt: "local error: tls: bad
//     record MAC";
//   - Node closes the connection without an alert: EOF, or a reset.
//
// afterHello says whether the server read the ClientHello: it answers it
// at once with its certificate, so an end of the connection after it
// follows the certificate; one before it does not count.
func refusedCertificate(err error, afterHello bool) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return afterHello
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Err == nil {
		return false
	}
	switch op.Op + ": " + op.Err.Error() {
	case "remote error: tls: unknown certificate authority", "remote error: tls: bad certificate",
		"remote error: tls: unknown certificate", "local error: tls: bad record MAC":
		return true
	}
	return false
}
