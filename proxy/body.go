package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// ErrBodyIdle is wrapped by the error a request body read returns when the
// client sent nothing for Options.BodyIdleTimeout; the request is answered
// 408 and its audit line carries cut_off "body-idle".
var ErrBodyIdle = errors.New("request body idle")

// idleBody bounds each wait for more of a request body: every Read first
// moves the connection's read deadline to now + timeout, so a client that
// stalls is cut off while one that keeps sending is not. At EOF the
// deadline is cleared: the HTTP server then reads in the background to
// notice a client that goes away, and must not time out.
//
// The deadline is the connection's read deadline, set through the
// server's http.ResponseController (an HTTP/2 stream's own, inside an
// intercepted tunnel served over HTTP/2).
type idleBody struct {
	io.ReadCloser
	rc readDeadliner
	// stream counts the body's cut-off when it is an HTTP/2 stream's,
	// whose timeouts no connection watcher sees (the server's count those
	// of HTTP/1.1 connections); nil otherwise.
	stream  *Metrics
	timeout time.Duration
	minRate int         // octets per second after the first timeout; 0: none
	start   time.Time   // when the body was first read
	n       int64       // octets read so far
	slow    atomic.Bool // a Read missed the minimum rate
	eof     atomic.Bool // Read saw the end
	idle    atomic.Bool // a Read timed out
	done    atomic.Bool // the handler returned: the deadline is not ours
}

// watchBody returns r with its body wrapped in an idleBody, and the
// idleBody, when the request has a body; else r itself and nil. The
// wrapped body goes on a shallow copy of r: the server must keep its own
// body, whose state (closed before its end) makes it close the connection
// after a cut-off body instead of reading the rest as the next request.
// CONNECT and WebSocket handshakes are left alone: their connection may
// become a tunnel that must not inherit a deadline.
func (p *Proxy) watchBody(w http.ResponseWriter, r *http.Request) (*http.Request, *idleBody) {
	if !hasBody(r) || r.Method == http.MethodConnect || isWebSocketUpgrade(r.Header) {
		return r, nil
	}
	b := p.newIdleBody(r.Body, http.NewResponseController(w))
	if r.ProtoMajor == 2 {
		b.stream = p.opts.Metrics
	}
	r = r.WithContext(r.Context())
	r.Body = b
	return r, b
}

// readDeadliner sets a connection's read deadline: an
// http.ResponseController.
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// newIdleBody returns body watched with the proxy's body limits, its
// waits bounded by read deadlines set through rc.
func (p *Proxy) newIdleBody(body io.ReadCloser, rc readDeadliner) *idleBody {
	return &idleBody{ReadCloser: body, rc: rc, timeout: p.opts.BodyIdleTimeout, minRate: p.opts.BodyMinRate}
}

// hasBody reports whether r has a request body to read.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

func (b *idleBody) Read(p []byte) (int, error) {
	rateBound := false
	if !b.eof.Load() && !b.done.Load() {
		var deadline time.Time
		deadline, rateBound = b.deadline(time.Now())
		_ = b.rc.SetReadDeadline(deadline)
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err != nil && rateBound && errors.Is(err, os.ErrDeadlineExceeded):
		b.slow.Store(true)
		b.countStream()
		err = fmt.Errorf("%w: %d octets in %s, slower than client.body_min_rate (%d octets/s): %w",
			ErrBodyIdle, b.n, time.Since(b.start).Round(time.Millisecond), b.minRate, err)
	case err == io.EOF:
		if !b.eof.Swap(true) && !b.done.Load() {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.idle.Store(true)
		b.countStream()
		err = fmt.Errorf("%w: no octet for %s (client.body_idle_timeout): %w", ErrBodyIdle, b.timeout, err)
	}
	return n, err
}

// countStream counts a cut-off body of an HTTP/2 stream in
// robotsproxy_client_refusals_total{cause="body_idle"}, as the server
// counts those of its connections.
func (b *idleBody) countStream() {
	if b.stream != nil {
		b.stream.CountClientRefusal(CauseBodyIdle)
	}
}

// deadline is when the next octet must have arrived: within the idle
// timeout, and (with a minimum rate) in time for the body to average
// minRate octets per second after its first timeout, which bounds a
// client that trickles one octet at a time. rateBound says the rate set it.
func (b *idleBody) deadline(now time.Time) (time.Time, bool) {
	if b.start.IsZero() {
		b.start = now
	}
	idle := now.Add(b.timeout)
	if b.minRate <= 0 {
		return idle, false
	}
	rate := b.start.Add(b.timeout + time.Duration(float64(b.n+1)/float64(b.minRate)*float64(time.Second)))
	if rate.Before(idle) {
		return rate, true
	}
	return idle, false
}

// finish is called when the handler returns. If the body was not read to
// its end, the HTTP server reads (up to 256 KiB of) the rest to reuse the
// connection; that read gets one more BodyIdleTimeout, not forever.
func (b *idleBody) finish() {
	if b == nil {
		return
	}
	if !b.eof.Load() && !b.idle.Load() {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	}
	b.done.Store(true)
}
