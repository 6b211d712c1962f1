package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// Inside an intercepted tunnel goproxy reads each request itself (its own
// parser on the TLS connection it makes over the hijacked client
// connection), past the HTTP server's limits; the proxy keeps them there
// as follows.
//
//   - Request target: onRequest answers 414 (client.max_request_target_bytes).
//   - Request line and headers: onRequest measures them (headerSize) and
//     answers 431 past MaxHeaderBytes plus headerSlack, as the server does,
//     then ends the tunnel. goproxy's parser holds a request's line and
//     headers whole before the proxy sees them and has no limit of its own,
//     so tunnelConn bounds what it can read for them: past tunnelHeaderCap
//     octets from the client (TLS records included) the read fails and the
//     tunnel is cut, audited header-too-large with status 0.
//   - Body: an idleBody on the client's connection (read deadlines under the
//     TLS layer): 408 and cut_off "body-idle" or "body-slow", as outside.
//   - Waits: between requests, IdleTimeout; from a request's first octet to
//     the end of its headers, ReadHeaderTimeout. Past either the tunnel is
//     closed (no answer can be sent: goproxy's parser fails first), the
//     header timeout audited client-timeout with status 0, as outside.

// headerSlack is what Go's HTTP server reads past MaxHeaderBytes before it
// answers 431 (net/http's initialReadLimitSize): a tunnel keeps it, so that
// a header is refused inside a tunnel exactly when it is outside.
const headerSlack = 4096

// tunnelHeaderCap is the most octets read from an intercepted tunnel's
// client towards one request's line and headers (TLS records included):
// twice the header limit with its slack, and 64 KiB for the TLS handshake,
// record overhead and one record read ahead. Up to it, a header over the
// limit is answered 431; past it, the tunnel is cut.
func (o *Options) tunnelHeaderCap() int64 {
	return 2*int64(o.MaxHeaderBytes+headerSlack) + 64<<10
}

// headerSize is the size in octets of req's request line and header fields
// as sent, counted as the server counts them: "METHOD target PROTO\r\n",
// each "Name: value\r\n" (Host included: the parser moves it out of
// Header) and the empty line. Whitespace around values and obsolete line
// folding, which the parser drops, are not counted.
func headerSize(req *http.Request) int {
	n := len(req.Method) + 1 + len(req.RequestURI) + 1 + len(req.Proto) + len("\r\n\r\n")
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

// refuseHeader answers 431 to a request inside an intercepted tunnel whose
// line and headers are over MaxHeaderBytes (plus headerSlack), before any
// work on it, and ends the tunnel after the answer, as the server closes
// the connection after its 431. Nil when the header is within the limit.
func (p *Proxy) refuseHeader(req *http.Request, st *state) *http.Response {
	size, limit := headerSize(req), p.opts.MaxHeaderBytes
	if size <= limit+headerSlack {
		return nil
	}
	p.opts.Metrics.CountClientRefusal(CauseHeaderTooLarge)
	d := st.decide(p.policy().DecideHeaderTooLarge(st.identityRequest(req), size, limit, headerSlack))
	st.parent.conn.end()
	resp := p.reject(req, st, d)
	resp.Close = true
	resp.Header.Set("Connection", "close")
	return resp
}

// tunnelConn is an intercepted tunnel's client connection as goproxy gets
// it from Hijack: goproxy's TLS layer reads the requests through it. It
// counts the octets read towards each request's line and headers (all but
// a body's) and cuts the tunnel past tunnelHeaderCap; it sets the read
// deadlines of the waits between requests and of each request's headers
// (a body's are idleBody's); and it ends the tunnel (reads return io.EOF)
// after a request whose body is not read to its end, as the server closes
// a connection it will not read on.
type tunnelConn struct {
	net.Conn
	p         *Proxy
	client    string // the client's address, for the audit line of a cut
	authority string // the tunnel's authority, likewise
	limit     int64  // tunnelHeaderCap

	mu     sync.Mutex
	head   int64 // octets read towards the next request's line and headers
	inBody bool  // a request body is read: its octets are not header octets
	raw    bool  // the tunnel carries a protocol switched to (101): not counted
	ended  bool  // no next request: reads return io.EOF
	// wait is set between requests, before the next one's first octet.
	wait bool
	// armed: the read deadline of the current wait (IdleTimeout) or
	// header (ReadHeaderTimeout) is set. It is set on the first read of
	// each, not when the last request ended: an answer may take longer
	// than the wait.
	armed  bool
	headAt time.Time // the current request's first octet, by Options.Now
}

// TunnelObserver is implemented by a client connection that classifies
// its own read timeouts (see package server): the proxy tells it when the
// connection becomes an intercepted tunnel, whose timeouts the proxy
// classifies and counts from then on.
type TunnelObserver interface {
	Tunnelled()
}

// errTunnelHeader is wrapped by the read error that cuts a tunnel whose
// client sent more than tunnelHeaderCap octets for a request's line and
// headers.
var errTunnelHeader = errors.New("request line and headers too large inside an intercepted tunnel")

// tunnel wraps the hijacked client connection c of the intercepted tunnel
// whose CONNECT state is st.
func (p *Proxy) tunnel(c net.Conn, st *state) net.Conn {
	t := &tunnelConn{Conn: c, p: p, authority: st.authority, limit: p.opts.tunnelHeaderCap(), wait: true}
	if a := c.RemoteAddr(); a != nil {
		t.client = a.String()
	}
	if o, ok := c.(TunnelObserver); ok {
		o.Tunnelled()
	}
	st.conn = t
	return t
}

// arm sets the read deadline of the current wait or header, once each,
// from the wall clock (deadlines are wall times); t.mu is held. A read
// that finds it armed costs no clock read.
func (t *tunnelConn) arm() {
	if t.armed || t.inBody || t.raw {
		return
	}
	d := t.p.opts.ReadHeaderTimeout
	if t.wait {
		d = t.p.opts.IdleTimeout
	}
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	_ = t.Conn.SetReadDeadline(deadline)
	t.armed = true
}

func (t *tunnelConn) Read(b []byte) (int, error) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return 0, io.EOF
	}
	t.arm()
	t.mu.Unlock()
	n, err := t.Conn.Read(b)
	t.mu.Lock()
	var r *Refusal
	if !t.inBody && !t.raw && !t.ended {
		if n > 0 && t.wait { // the next request's first octet: its header's time starts
			t.wait, t.armed, t.headAt = false, false, t.p.opts.Now()
			t.arm()
		}
		t.head += int64(n)
		switch {
		case t.head > t.limit:
			err = fmt.Errorf("%w: more than %d octets read for them, the cap for client.max_header_bytes %d",
				errTunnelHeader, t.limit, t.p.opts.MaxHeaderBytes)
			r = &Refusal{Reason: auditlog.ReasonHeaderTooLarge, Cause: CauseHeaderTooLarge, Err: err}
			n, t.ended = 0, true
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded) && t.wait:
			t.ended = true
			t.p.opts.Metrics.CountClientRefusal(CauseIdleTimeout) // no request: no line, as outside
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			r = &Refusal{Reason: auditlog.ReasonClientTimeout, Cause: CauseHeaderTimeout,
				Err: fmt.Errorf("no complete request line and headers within client.read_header_timeout inside an intercepted tunnel: %w", err)}
			t.ended = true
		}
	}
	t.mu.Unlock()
	if r != nil {
		r.Client, r.Target, r.TargetCut, r.Start = t.client, "https://"+t.authority, true, t.headAt
		t.p.AuditRefusal(*r)
	}
	return n, err
}

// headerRead is called when goproxy has read a request's line and headers:
// the octets read from now on are its body (when body is set) or the next
// request's. Safe on nil.
func (t *tunnelConn) headerRead(body bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.head, t.inBody, t.wait, t.armed = 0, body, !body, false
	t.mu.Unlock()
}

// bodyRead is called when a request body was read to its end: the octets
// read from now on are the next request's. Safe on nil.
func (t *tunnelConn) bodyRead() { t.headerRead(false) }

// switched is called when the tunnel switched protocols (101): what it
// carries from now on is not requests. Safe on nil.
func (t *tunnelConn) switched() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.raw = true
	_ = t.Conn.SetReadDeadline(time.Time{}) // a header's or a wait's
	t.mu.Unlock()
}

// cutBody ends the tunnel after a request body that was cut off (408),
// and counts it: the server does not see this connection's timeouts any
// more (TunnelObserver). Safe on nil.
func (t *tunnelConn) cutBody() {
	if t == nil {
		return
	}
	t.p.opts.Metrics.CountClientRefusal(CauseBodyIdle)
	t.end()
}

// end ends the tunnel after the current answer: no further request is
// read from it. Safe on nil.
func (t *tunnelConn) end() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
}
