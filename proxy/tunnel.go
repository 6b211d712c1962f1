package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/robotsproxy/robotsproxy/auditlog"
	"golang.org/x/net/http2"
)

// An intercepted tunnel (Options.Intercept) is served by the proxy itself
// once the CONNECT is answered 200, as the server serves its own
// connections, with the same limits:
//
//   - The first octet must come within IdleTimeout (else the tunnel is
//     closed and counted, as an idle connection is outside), and the TLS
//     handshake must end within ReadHeaderTimeout (else the tunnel is
//     closed and audited client-timeout). The proxy presents a
//     certificate from the operator's CA and offers h2 and http/1.1 by
//     ALPN (RFC 7301). A client that sends no TLS speaks cleartext HTTP/1.
//   - HTTP/1.1 is read by Go's HTTP server (one per Proxy, serving each
//     tunnel's connection) with the listener's limits: MaxHeaderBytes
//     (431), ReadHeaderTimeout, IdleTimeout, and its own answers to
//     malformed requests (400, 501, ...), which the server that accepted
//     the connection audits as it audits its own (TunnelWatcher).
//   - HTTP/2 is served by golang.org/x/net/http2 with the bounds of
//     newH2Server: H2MaxConcurrentStreams, the header list size
//     (refuseHeader), IdleTimeout, a ping after ReadHeaderTimeout of
//     silence, and H2MaxResetsPerSecond (h2Conn).
//   - Each request, or stream, is then served as a proxy request read
//     outside a tunnel is (serve): the same decision, refusal,
//     politeness, usage, license and egress steps, body limits and audit
//     line, marked intercepted and with its protocol.

// tlsRecordHandshake is the first octet of a TLS ClientHello (RFC 8446
// 5.1: ContentType handshake).
const tlsRecordHandshake = 22

// tunnel is an intercepted tunnel, as the requests read inside it see it
// (through their context: see tunnelOf).
type tunnel struct {
	parent *state // the CONNECT's state
	scheme string // "https", or "http" when the client sent no TLS
	ctx    context.Context
}

type tunnelKey struct{}

// tunnelOf returns the tunnel a request was read in, nil outside one.
func tunnelOf(r *http.Request) *tunnel {
	t, _ := r.Context().Value(tunnelKey{}).(*tunnel)
	return t
}

// TunnelObserver is implemented by a client connection that classifies
// its own read timeouts (see package server): the proxy tells it when the
// connection becomes an intercepted tunnel, whose timeouts the proxy's
// own HTTP servers classify from then on.
type TunnelObserver interface {
	Tunnelled()
}

// TunnelWatcher is implemented by a client connection whose server
// watches, inside an intercepted tunnel it carries, the HTTP/1.1 requests
// as it watches its own (see package server): WatchTunnel returns the
// connection the tunnel's HTTP server reads, inner (the TLS connection, or
// the cleartext one), wrapped so that the requests that server refuses
// itself (431, 400, 501, timeouts) are audited, an origin-form target
// after base ("https://host:port"). The connection it returns may
// implement ConnObserver.
type TunnelWatcher interface {
	WatchTunnel(inner net.Conn, base string) net.Conn
}

// interceptAction is the answer to the CONNECT of an intercepted tunnel
// whose state is st: 200, then the tunnel served (serveTunnel).
func (p *Proxy) interceptAction(st *state, client netip.Addr) *goproxy.ConnectAction {
	return &goproxy.ConnectAction{Action: goproxy.ConnectHijack,
		Hijack: func(req *http.Request, c net.Conn, ctx *goproxy.ProxyCtx) {
			if _, err := fmt.Fprintf(c, "HTTP/%d.%d 200 OK\r\n\r\n", req.ProtoMajor, req.ProtoMinor); err != nil {
				_ = c.Close()
				return
			}
			go p.serveTunnel(c, st, req, ctx, client)
		}}
}

// serveTunnel serves an intercepted tunnel on c, the hijacked client
// connection (with the octets the server read ahead), until it ends.
func (p *Proxy) serveTunnel(c net.Conn, st *state, connect *http.Request, ctx *goproxy.ProxyCtx, client netip.Addr) {
	outer := unwrapPrefix(c)
	if o, ok := outer.(TunnelObserver); ok {
		o.Tunnelled()
	}
	c, first, err := p.firstOctet(c)
	if err != nil {
		_ = c.Close()
		return
	}
	t := &tunnel{parent: st, scheme: "https"}
	t.ctx = context.WithValue(tunnelBase(connect), tunnelKey{}, t)
	conn := c
	if first != tlsRecordHandshake {
		t.scheme = "http"
	} else {
		tc, err := p.handshake(c, st, connect.Host, ctx, client)
		if err != nil {
			_ = c.Close()
			return
		}
		if tc.ConnectionState().NegotiatedProtocol == http2.NextProtoTLS {
			p.serveH2(tc, t)
			return
		}
		conn = tc
	}
	if w, ok := outer.(TunnelWatcher); ok {
		conn = w.WatchTunnel(conn, t.scheme+"://"+st.authority)
	}
	_ = p.h1.Serve(&tunnelListener{c: conn, addr: conn.LocalAddr(), t: t})
}

// tunnelBase is the base context of the requests read inside a tunnel:
// the base context of the server that served the CONNECT (its
// BaseContext, called with a nil net.Listener), where a shutdown cancels
// the requests in flight (ErrShutdown), without what was the CONNECT's
// own (its cancellation once its handler returned, its connection's
// ConnObserver); context.Background when that server sets none.
func tunnelBase(connect *http.Request) context.Context {
	if srv, ok := connect.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.BaseContext != nil {
		if ctx := srv.BaseContext(nil); ctx != nil {
			return ctx
		}
	}
	return context.Background()
}

// firstOctet waits up to IdleTimeout for the tunnel's first octet and
// returns c, which still reads it, and the octet. Past the wait the
// tunnel ends, counted CauseIdleTimeout: no request was sent, so no line
// is written, as for an idle connection outside.
func (p *Proxy) firstOctet(c net.Conn) (net.Conn, byte, error) {
	if pc, ok := c.(*prefixConn); ok && len(pc.prefix) > 0 {
		return pc, pc.prefix[0], nil // sent with the CONNECT
	}
	if d := p.opts.IdleTimeout; d > 0 {
		_ = c.SetReadDeadline(time.Now().Add(d))
	}
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			p.opts.Metrics.CountClientRefusal(CauseIdleTimeout)
		}
		return c, 0, err
	}
	return &prefixConn{Conn: c, prefix: b[:]}, b[0], nil
}

// handshake runs the TLS handshake of an intercepted tunnel with the
// certificate Options.Intercept gives for its authority, offering h2 and
// http/1.1, within ReadHeaderTimeout. A client that turns the certificate
// down is reported to Options.OnUntrusted (see refusedCertificate); one
// that does not finish in time is audited client-timeout.
func (p *Proxy) handshake(c net.Conn, st *state, host string, ctx *goproxy.ProxyCtx, client netip.Addr) (*tls.Conn, error) {
	cfg, err := p.opts.Intercept(st.authority, ctx)
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{http2.NextProtoTLS, "http/1.1"}
	hello := false // the ClientHello was read: the certificate is sent next
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		hello = true
		return nil, nil // cfg itself
	}
	start := p.opts.Now()
	if d := p.opts.ReadHeaderTimeout; d > 0 {
		_ = c.SetReadDeadline(time.Now().Add(d))
	}
	tc := tls.Server(c, cfg)
	err = tc.Handshake()
	_ = c.SetReadDeadline(time.Time{})
	switch {
	case err == nil:
		return tc, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		_ = p.AuditRefusal(Refusal{Client: remoteAddr(c), Target: "https://" + st.authority, TargetCut: true,
			Reason: auditlog.ReasonClientTimeout, Cause: CauseHeaderTimeout, Intercepted: true, Start: start,
			Err: fmt.Errorf("no TLS handshake within client.read_header_timeout inside an intercepted tunnel: %w", err)})
	case p.opts.OnUntrusted != nil && refusedCertificate(err, hello):
		p.opts.OnUntrusted(client, host, err)
	}
	return nil, err
}

// remoteAddr returns the client's address of c, host:port, "" when unknown.
func remoteAddr(c net.Conn) string {
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// tunnelListener hands one tunnel's connection to the proxy's HTTP/1.1
// server (Proxy.h1): Accept returns it once, then net.ErrClosed, so that
// Serve returns while the connection is served.
type tunnelListener struct {
	c    net.Conn // nil once accepted
	addr net.Addr
	t    *tunnel
}

func (l *tunnelListener) Accept() (net.Conn, error) {
	if l.c == nil {
		return nil, net.ErrClosed
	}
	c := l.c
	l.c = nil
	return c, nil
}

func (l *tunnelListener) Close() error   { return nil }
func (l *tunnelListener) Addr() net.Addr { return l.addr }

// newH1Server returns the HTTP/1.1 server of intercepted tunnels: the
// client limits of o, serveInner for every request, and no HTTP/2 (it is
// negotiated before: see serveTunnel).
func newH1Server(o *Options, h http.Handler) *http.Server {
	var protos http.Protocols
	protos.SetHTTP1(true)
	return &http.Server{
		Handler:                      h,
		ReadHeaderTimeout:            o.ReadHeaderTimeout,
		IdleTimeout:                  o.IdleTimeout,
		MaxHeaderBytes:               o.MaxHeaderBytes,
		Protocols:                    &protos,
		DisableGeneralOptionsHandler: true,
		BaseContext:                  func(l net.Listener) context.Context { return l.(*tunnelListener).t.ctx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if o, ok := c.(ConnObserver); ok {
				return WithConnObserver(ctx, o)
			}
			return ctx
		},
	}
}

// serveInner serves a request read inside an intercepted tunnel (HTTP/1.1
// or an HTTP/2 stream): its URL made absolute (the tunnel's scheme, its
// Host or the tunnel's authority), it is served as a proxy request is
// outside (serve).
func (p *Proxy) serveInner(w http.ResponseWriter, r *http.Request) {
	t := tunnelOf(r)
	if t == nil { // not read by a tunnel's server: cannot happen
		http.Error(w, "robotsproxy: a request outside any tunnel", http.StatusInternalServerError)
		return
	}
	if !r.URL.IsAbs() {
		r.URL.Host = r.Host
		if r.URL.Host == "" {
			r.URL.Host = t.parent.authority
		}
	}
	r.URL.Scheme = t.scheme
	if r.ContentLength == 0 && r.ProtoMajor == 2 {
		r.Body = http.NoBody // an HTTP/2 stream ended with its headers: forwarded with no body
	}
	p.serve(w, r, t.parent)
}

// headerSlack is what Go's HTTP server reads past MaxHeaderBytes before it
// answers 431 (net/http's initialReadLimitSize): an HTTP/2 stream keeps
// it, so that a header is refused over HTTP/2 exactly when it is over
// HTTP/1.1.
const headerSlack = 4096

// headerSize is the size in octets of req's request line and header fields
// as HTTP/1.1 sends them, counted as the server counts them: "METHOD
// target PROTO\r\n", each "Name: value\r\n" (Host included: the parser
// moves it out of Header) and the empty line.
func headerSize(req *http.Request) int {
	n := len(req.Method) + 1 + len(req.RequestURI) + 1 + len("HTTP/1.1") + len("\r\n\r\n")
	if req.Host != "" {
		n += len("Host: \r\n") + len(req.Host)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}

// refuseHeader answers 431 to an HTTP/2 request whose header fields,
// counted as HTTP/1.1 sends them (headerSize), are over MaxHeaderBytes
// plus headerSlack, before any work on it; nil when they are within the
// limit. (The HTTP/1.1 server answers 431 itself; the HTTP/2 server only
// past its hard cap, twice that: see newH2Server.)
func (p *Proxy) refuseHeader(req *http.Request, st *state) *http.Response {
	if req.ProtoMajor != 2 {
		return nil // HTTP/1.1's server answered 431 itself
	}
	size, limit := headerSize(req), p.opts.MaxHeaderBytes
	if size <= limit+headerSlack {
		return nil
	}
	p.opts.Metrics.CountClientRefusal(CauseHeaderTooLarge)
	d := st.decide(p.policy().DecideHeaderTooLarge(st.identityRequest(req), size, limit, headerSlack))
	return p.reject(req, st, d)
}
