package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/robotsproxy/robotsproxy/policy"
)

// A crawl-delay turn is counted from the moment the request is sent
// (politeness.Options.CountFromSend): when its first octet is written to
// the origin's connection. The transport's connections (NewTransport) are
// sendConns; when the transport has a connection for a Paced request
// (httptrace GotConn), the request is armed on it, and the connection's
// next write, the request's first (HTTP/1.1 writes one request at a time
// on a connection, and nothing while it is idle), asks the ticket first
// (Sending) and tells it after the write returns (Wrote). The next
// request's turn is thus counted from a moment no earlier than the
// octets left the proxy.

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
func traceSend(req *http.Request, t *policy.Ticket) *http.Request {
	tk := *t
	if tk == nil || !tk.Paced() {
		return req
	}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			c := info.Conn
			if u, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
				c = u.NetConn()
			}
			if sc, ok := c.(*sendConn); ok {
				sc.armed.Store(t)
				return
			}
			if tk.SendingUnreported() != nil {
				_ = info.Conn.Close()
			}
		},
		GotFirstResponseByte: tk.Wrote,
	}
	return req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
}
