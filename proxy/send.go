package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"golang.org/x/net/http2"

	"github.com/robotsproxy/robotsproxy/policy"
)

// A crawl-delay turn is counted from the moment the request is sent
// (politeness.Options.CountFromSend): when its first octet is written to
// the origin's connection. The transport's connections (NewTransport) are
// sendConns; when the transport has an HTTP/1.1 connection for a Paced
// request (httptrace GotConn), the request is armed on it, and the
// connection's next write, the request's first (HTTP/1.1 writes one
// request at a time on a connection, and nothing while it is idle), asks
// the ticket first (Sending) and tells it after the write returns (Wrote).
// An HTTP/2 connection carries many requests at once, so its next write
// may be another's: there the request asks the ticket when it has the
// connection (a refusal cancels the request, whose HEADERS are then never
// written: the transport checks its context under the connection's write
// lock, before it writes them) and tells it once its HEADERS are written
// (WroteHeaders). Either way the next request's turn is counted from a
// moment no earlier than the octets left the proxy.

// sendConn is a connection to an origin that tells the ticket of the
// request armed on it when that request's first octets are written.
type sendConn struct {
	net.Conn
	armed atomic.Pointer[policy.Ticket]
}

// Write implements net.Conn. A write the ticket refuses (its turn ended
// unsent) writes nothing: the transport then fails the request, or sends
// it again on another connection, which asks again.
func (c *sendConn) Write(b []byte) (int, error) {
	if c.armed.Load() == nil {
		return c.Conn.Write(b)
	}
	tp := c.armed.Swap(nil)
	if tp == nil {
		return c.Conn.Write(b)
	}
	t := *tp
	if err := t.Sending(); err != nil {
		return 0, fmt.Errorf("send to the origin: %w", err)
	}
	defer t.Wrote()
	return c.Conn.Write(b)
}

// sendDialer wraps dial's connections in sendConns.
func sendDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sendConn{Conn: c}, nil
	}
}

// traceSend returns req with a trace that arms *t, the request's ticket,
// on the connection the transport gives the request; req unchanged when
// the ticket is not Paced. t points into the request's state, so that
// arming a connection copies nothing.
//
// A connection that is no sendConn (a transport not made by NewTransport)
// cannot report its write: the request asks the ticket when it has the
// connection (a refusal closes it, so that nothing is written) and counts
// as sent when the origin's first response octet arrives, or when the
// ticket is released: later than the write, so the spacing still holds,
// with room to spare. The first response octet also ends the turn of a
// sendConn's request whose writer has not yet reported it: the request
// was written by then.
func traceSend(req *http.Request, tp *policy.Ticket) *http.Request {
	t := *tp
	if t == nil || !t.Paced() {
		return req
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	var h2 atomic.Bool // the request goes on an HTTP/2 connection
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			c := info.Conn
			if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == http2.NextProtoTLS {
				if err := t.Sending(); err != nil {
					cancel(err) // the HEADERS are not written
				}
				h2.Store(true)
				return
			}
			if u, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
				c = u.NetConn()
			}
			if sc, ok := c.(*sendConn); ok {
				sc.armed.Store(tp)
				return
			}
			if t.SendingUnreported() != nil {
				_ = info.Conn.Close()
			}
		},
		WroteHeaders: func() {
			if h2.Load() {
				t.Wrote()
			}
		},
		GotFirstResponseByte: t.Wrote,
	}
	return req.WithContext(httptrace.WithClientTrace(ctx, trace))
}
