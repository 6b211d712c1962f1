package proxy

import (
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"

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
	// clients maps a session (masked as goproxy logs it) to its client,
	// from the TLS configuration's request to the handshake's end. It
	// holds at most 65536 entries: a later session reuses an entry.
	clients sync.Map // int64 -> netip.Addr
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
		if c, ok := l.clients.LoadAndDelete(session); ok && refusedCertificate(err) {
			l.untrusted(c.(netip.Addr), host, err)
			return
		}
	}
	l.next.Printf(format, v...)
}

// tlsConfig returns the TLS configuration source of one intercepted tunnel
// from client: Options.Intercept, after noting the client for goproxyLog.
func (p *Proxy) tlsConfig(client netip.Addr) func(string, *goproxy.ProxyCtx) (*tls.Config, error) {
	if p.handshakes.untrusted == nil {
		return p.opts.Intercept
	}
	return func(host string, ctx *goproxy.ProxyCtx) (*tls.Config, error) {
		p.handshakes.clients.Store(ctx.Session&0xFFFF, client)
		return p.opts.Intercept(host, ctx)
	}
}

// refusedCertificate reports whether err is a TLS alert from the client
// that rejects the server's certificate (RFC 8446 6.2): unknown_ca (what
// OpenSSL clients such as curl, Python and Node send for an untrusted CA),
// bad_certificate (Go's client) or certificate_unknown. crypto/tls reports
// a received alert as a *net.OpError "remote error" around its alert,
// whose type is not exported: its text is compared.
func refusedCertificate(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	switch op.Err.Error() {
	case "tls: unknown certificate authority", "tls: bad certificate", "tls: unknown certificate":
		return true
	}
	return false
}
