package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/elazarl/goproxy"
)

// goproxy performs the client-side TLS handshake of an intercepted tunnel
// itself and reports a failure only to its Logger, as
// "[SESSION] WARN: Cannot handshake client HOST ERR" with the ProxyCtx's
// Session (masked to 16 bits), the CONNECT's host and the error. goproxyLog
// is that Logger: it recognises a client that refused the proxy's
// certificate and tells Options.OnUntrusted, naming the client by the
// address tlsConfig recorded for the session; every other message goes to
// goproxy's own logger as before.
type goproxyLog struct {
	next      goproxy.Logger
	untrusted func(client netip.Addr, host string, err error)
	// clients maps a session (masked as goproxy logs it) to its
	// handshake, from the TLS configuration's request on. It holds at most
	// 65536 entries: a later session reuses an entry.
	clients sync.Map // int64 -> *handshake
}

// handshake is one intercepted tunnel's client-side TLS handshake.
type handshake struct {
	client netip.Addr
	hello  atomic.Bool // the ClientHello was read: the certificate is sent next
}

// handshakeFailed is the start of goproxy's message for a failed
// client-side handshake (goproxy https.go).
const handshakeFailed = "[%03d] WARN: Cannot handshake client %v %v"

// Printf implements goproxy.Logger.
func (l *goproxyLog) Printf(format string, v ...any) {
	if l.untrusted != nil && strings.HasPrefix(format, handshakeFailed) && len(v) == 3 {
		session, _ := v[0].(int64)
		host, _ := v[1].(string)
		err, _ := v[2].(error)
		if v, ok := l.clients.LoadAndDelete(session); ok {
			if hs := v.(*handshake); refusedCertificate(err, hs.hello.Load()) {
				l.untrusted(hs.client, host, err)
				return
			}
		}
	}
	l.next.Printf(format, v...)
}

// tlsConfig returns the TLS configuration source of one intercepted tunnel
// from client: Options.Intercept's, noting for goproxyLog the client and
// whether its ClientHello was read.
func (p *Proxy) tlsConfig(client netip.Addr) func(string, *goproxy.ProxyCtx) (*tls.Config, error) {
	if p.handshakes.untrusted == nil {
		return p.opts.Intercept
	}
	return func(host string, ctx *goproxy.ProxyCtx) (*tls.Config, error) {
		cfg, err := p.opts.Intercept(host, ctx)
		if err != nil {
			return nil, err
		}
		hs := &handshake{client: client}
		p.handshakes.clients.Store(ctx.Session&0xFFFF, hs)
		cfg = cfg.Clone()
		cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			hs.hello.Store(true)
			return nil, nil // cfg itself
		}
		return cfg, nil
	}
}

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
