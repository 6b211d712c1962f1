package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// headMax bounds the first octets of a request kept to recover its method,
// target and User-Agent for the audit line of a refusal.
const headMax = 4 << 10

// phase is where a connection is in Go's HTTP/1 server loop.
type phase int

const (
	// reading: the server reads a request line and headers; whatever it
	// writes now is a refusal of its own (431, 400, 501, 505, 417).
	reading phase = iota
	// serving: the proxy handler runs.
	serving
	// after: the handler returned; the server flushes its response, then
	// clears the write deadline and reads the next request. A hijacked
	// connection stays here.
	after
)

// clientConn watches one client connection for the refusals Go's HTTP
// server makes without calling the handler: it keeps the first octets of
// the request being read, recognises the server's own error response (a
// write that starts with "HTTP/1." while no handler runs) and timeouts, and
// reports them to its tracker. The handler marks its phases through
// proxy.ConnObserver.
//
// Its cost per request is kept to the phases that need it: while a
// handler runs and after it (phase serving and after), a read or write
// passes straight through, unless it is the server's one-octet
// background read or fails; and a deadline the connection already has is
// not set again (the server clears deadlines that were never set, once or
// twice per request).
type clientConn struct {
	net.Conn
	t         *tracker
	closeOnce sync.Once
	// quiet mirrors phase != reading, for the reads and writes that take
	// no lock (see Read and Write). It is stored under mu.
	quiet atomic.Bool

	mu       sync.Mutex
	phase    phase
	served   int       // handlers started on this connection
	head     []byte    // first octets of the request being read
	headAt   time.Time // when its first octet arrived
	trusted  bool      // head starts at the request's first octet
	ahead    bool      // the request had octets past its headers in head
	bgByte   []byte    // the server's one-octet background read, if any
	deadline time.Time // the read deadline last set
	// writeDeadline is the write deadline last set; readSet and writeSet
	// report that deadline and writeDeadline are what the connection
	// beneath has (a deadline set before is not set again).
	writeDeadline     time.Time
	readSet, writeSet bool
	timedOut          bool // read_header_timeout expired with part of a request read
	ended             bool // a refusal or timeout was reported: nothing more
	tunnel            bool // an intercepted tunnel: the proxy classifies its timeouts
	// base is set on the connection read inside an intercepted tunnel
	// (see WatchTunnel): "https://host:port", before the origin-form
	// targets of its refusals' lines. Such a connection holds no
	// max_connections token and is not counted as a client connection:
	// the one that carries it is.
	base string
}

func newClientConn(nc net.Conn, t *tracker) *clientConn {
	return &clientConn{Conn: nc, t: t, trusted: true}
}

// aLongTimeAgo is the read deadline below which a timeout is the server
// aborting its own background read (net/http uses time.Unix(1, 0)).
var aLongTimeAgo = time.Unix(2, 0)

func (c *clientConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == nil && len(b) != 1 && c.quiet.Load() {
		return n, nil // nothing to keep: see record and readFailed
	}
	c.mu.Lock()
	if n > 0 {
		c.record(b[:n], len(b) == 1)
	}
	var report func()
	if err != nil && !c.ended {
		report = c.readFailed(err)
	}
	c.mu.Unlock()
	if report != nil {
		report()
	}
	return n, err
}

// record keeps the octets b of the request being read (up to headMax),
// and the server's background read during a handler (the only read into a
// one-octet buffer, oneOctet): with pipelining, that octet is the next
// request's first.
func (c *clientConn) record(b []byte, oneOctet bool) {
	switch {
	case c.phase == reading:
		if len(c.head) == 0 {
			c.headAt = c.t.now()
		}
		c.head = append(c.head, b[:min(len(b), headMax-len(c.head))]...)
	case oneOctet:
		c.bgByte = append(c.bgByte[:0], b[0])
	}
}

// readFailed classifies a failed read and returns what to report, if
// anything. A timeout while reading a request is header_timeout or, on a
// keep-alive connection with nothing read, idle_timeout; during or after a
// handler it is body_idle. When part of a request arrived before the
// timeout, the audit line waits for what the server does next: it may
// answer 400 to the partial request (Write) or just close (Close).
func (c *clientConn) readFailed(err error) func() {
	timeout := errors.Is(err, os.ErrDeadlineExceeded)
	if c.tunnel || timeout && !c.deadline.IsZero() && c.deadline.Before(aLongTimeAgo) {
		// An intercepted tunnel's (the proxy classifies them), or the
		// server aborting its background read.
		return nil
	}
	switch {
	case c.phase != reading:
		if !timeout {
			return nil
		}
		c.ended = true
		return func() { c.t.count(proxy.CauseBodyIdle) }
	case timeout && len(c.head) > 0:
		c.timedOut = true
	case timeout && c.served > 0:
		c.ended = true
		return func() { c.t.count(proxy.CauseIdleTimeout) }
	case timeout:
		c.ended = true
		return func() { c.t.count(proxy.CauseHeaderTimeout) }
	}
	return nil
}

// errHeaderTimeout is the audit line's error for a request whose line and
// headers did not arrive in time.
var errHeaderTimeout = errors.New("no complete request line and headers within client.read_header_timeout")

// closing returns the refusal to report when the connection closes in
// the middle of reading a request: one that timed out and got no answer
// (status 0), or one cut off by shutdown.
func (c *clientConn) closing() *proxy.Refusal {
	if c.ended || c.phase != reading || len(c.head) == 0 {
		return nil
	}
	var r proxy.Refusal
	switch {
	case c.timedOut:
		r = c.refusal(0, auditlog.ReasonClientTimeout, proxy.CauseHeaderTimeout, errHeaderTimeout)
	case c.t.stopping.Load():
		r = c.refusal(0, auditlog.ReasonShutdown, "", errors.New("closed by shutdown while reading the request"))
		r.CutOff = auditlog.CutOffShutdown
	default:
		return nil
	}
	c.ended = true
	return &r
}

func (c *clientConn) Write(b []byte) (int, error) {
	if c.quiet.Load() { // a handler's answer, never the server's own
		return c.Conn.Write(b)
	}
	c.mu.Lock()
	var r *proxy.Refusal
	if c.phase == reading && !c.ended && bytes.HasPrefix(b, []byte("HTTP/1.")) {
		c.ended = true
		r = c.serverRefusal(b)
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(b)
	if r != nil {
		if err != nil {
			r.Status, r.Bytes = 0, 0
			r.Err = fmt.Errorf("%v; not sent: %w", r.Err, err)
		}
		c.t.refuse(*r)
	}
	return n, err
}

// serverRefusal is the refusal behind the server's own error response b:
// "HTTP/1.1 431 Request Header Fields Too Large\r\n...", or 400, 501, 505,
// 417, ... (see conn.serve in net/http/server.go).
func (c *clientConn) serverRefusal(b []byte) *proxy.Refusal {
	line, _, _ := bytes.Cut(b, []byte("\r\n"))
	status, text := 0, ""
	if _, rest, ok := bytes.Cut(line, []byte(" ")); ok && len(rest) >= 3 {
		status, _ = strconv.Atoi(string(rest[:3]))
		text = string(bytes.TrimSpace(rest[3:]))
	}
	reason, cause, err := policy.Reason(auditlog.ReasonMalformed), proxy.CauseMalformed, fmt.Errorf("refused by the HTTP server: %s", text)
	switch {
	case c.timedOut: // the server parsed what arrived before the timeout
		reason, cause, err = auditlog.ReasonClientTimeout, proxy.CauseHeaderTimeout, errHeaderTimeout
	case status == 431:
		reason, cause = auditlog.ReasonHeaderTooLarge, proxy.CauseHeaderTooLarge
	}
	r := c.refusal(status, reason, cause, err)
	if _, body, ok := bytes.Cut(b, []byte("\r\n\r\n")); ok {
		r.Bytes = int64(len(body))
	}
	return &r
}

// refusal describes the request being read, as far as head tells.
func (c *clientConn) refusal(status int, reason policy.Reason, cause proxy.RefusalCause, err error) proxy.Refusal {
	r := proxy.Refusal{Client: c.RemoteAddr().String(), Status: status, Reason: reason, Cause: cause,
		Start: c.headAt, Err: err}
	if c.trusted {
		h := parseHead(c.head)
		r.Method, r.Target, r.TargetCut, r.UserAgent, r.Protocol = h.method, h.target, h.targetCut, h.userAgent, h.protocol
	}
	if c.base != "" {
		r.Intercepted = true
		switch {
		case r.Target == "":
			r.Target, r.TargetCut = c.base, true
		case strings.HasPrefix(r.Target, "/"):
			r.Target = c.base + r.Target
		}
	}
	return r
}

// SetReadDeadline records the deadline, to tell the server's aborts from
// timeouts, and sets it unless the connection has it already.
func (c *clientConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setReadLocked(t)
}

// setReadLocked sets the read deadline t, unless it is already set.
// Called with c.mu held, so that the deadline recorded is always the
// connection's.
func (c *clientConn) setReadLocked(t time.Time) error {
	if c.readSet && t.Equal(c.deadline) {
		return nil
	}
	c.deadline = t
	err := c.Conn.SetReadDeadline(t)
	c.readSet = err == nil
	return err
}

// setWriteLocked sets the write deadline t, unless it is already set.
// Called with c.mu held.
func (c *clientConn) setWriteLocked(t time.Time) error {
	if c.writeSet && t.Equal(c.writeDeadline) {
		return nil
	}
	c.writeDeadline = t
	err := c.Conn.SetWriteDeadline(t)
	c.writeSet = err == nil
	return err
}

// SetDeadline sets both deadlines.
func (c *clientConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.setReadLocked(t), c.setWriteLocked(t))
}

// SetWriteDeadline: the server clears the write deadline once a handler's
// response is flushed (conn.serve, after finishRequest), which ends its
// phase: the next octets are the next request.
func (c *clientConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == after && t.IsZero() {
		c.setPhase(reading)
		c.head = append(c.head[:0], c.bgByte...)
		c.headAt = c.t.now()
		c.trusted = !c.ahead
		c.bgByte, c.ahead = c.bgByte[:0], false
	}
	return c.setWriteLocked(t)
}

// setPhase moves the connection to phase p. Called with c.mu held.
func (c *clientConn) setPhase(p phase) {
	c.phase = p
	c.quiet.Store(p != reading)
}

// waitingForHeaders reports whether the server is reading a request line
// and headers that have not all arrived (nothing, or part of them).
func (c *clientConn) waitingForHeaders() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase == reading && len(c.head) < headMax && headerEnd(c.head) < 0
}

// Serving implements proxy.ConnObserver.
func (c *clientConn) Serving() {
	c.mu.Lock()
	if c.phase == reading {
		// Octets past the end of the headers are the body or, with
		// pipelining, the next request: its start is then unknown.
		end := headerEnd(c.head)
		c.ahead = end < 0 || end < len(c.head)
	}
	c.setPhase(serving)
	c.served++
	c.bgByte = c.bgByte[:0]
	c.mu.Unlock()
}

// WatchTunnel implements proxy.TunnelWatcher: the HTTP/1.1 requests read
// inside the intercepted tunnel this connection carries are watched as
// this connection's are.
func (c *clientConn) WatchTunnel(inner net.Conn, base string) net.Conn {
	return c.t.addTunnel(inner, base)
}

// Tunnelled implements proxy.TunnelObserver.
func (c *clientConn) Tunnelled() {
	c.mu.Lock()
	c.tunnel = true
	c.mu.Unlock()
}

// Served implements proxy.ConnObserver.
func (c *clientConn) Served() {
	c.mu.Lock()
	c.setPhase(after)
	c.mu.Unlock()
}

// Close closes the connection once, releasing its max_connections token,
// and reports a request it cuts short (see closing).
func (c *clientConn) Close() error {
	c.mu.Lock()
	r := c.closing()
	c.mu.Unlock()
	err := c.Conn.Close()
	if r != nil {
		c.t.refuse(*r)
	}
	c.closeOnce.Do(func() { c.t.remove(c) })
	return err
}

// CloseWrite and CloseRead keep TCP half-close for the HTTP server (after
// a 431) and goproxy's CONNECT tunnels.
func (c *clientConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Conn.Close()
}

// CloseRead: see CloseWrite.
func (c *clientConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return nil
}

// ReadFrom keeps the TCP connection's own ReadFrom (splice, sendfile) for
// response bodies and tunnels; the server never writes a refusal this way.
func (c *clientConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}
