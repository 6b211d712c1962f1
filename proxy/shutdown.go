package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// ErrShutdown is the cause with which the server cancels the context of
// every request still in flight when its shutdown timeout expires: upstream
// round trips abort, the client gets 503 and the audit line carries
// cut_off "shutdown".
var ErrShutdown = errors.New("robotsproxy is shutting down")

// flight is one ServeHTTP call in progress, as Abandon sees it: what the
// client sent, copied when the handler started (goproxy edits the request
// later). Whether its audit line is written is its exchange's state's
// (state.line).
type flight struct {
	client, method, url, userAgent string
	start                          time.Time
}

// InFlight returns the number of requests whose handler is running.
func (p *Proxy) InFlight() int {
	p.flights.mu.Lock()
	defer p.flights.mu.Unlock()
	return len(p.flights.set)
}

// WaitIdle waits until no handler is running, or ctx ends; it reports
// whether none is.
func (p *Proxy) WaitIdle(ctx context.Context) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for p.InFlight() > 0 {
		select {
		case <-ctx.Done():
			return p.InFlight() == 0
		case <-tick.C:
		}
	}
	return true
}

// Abandon gives up on the requests whose handler is still running at the
// end of a shutdown: it writes the audit line of each (decision "deny",
// reason "shutdown", cut_off "shutdown", status 0: nothing more will be
// sent) and makes sure their handlers write none. Once it returns, no
// handler writes to the audit log. It returns the number abandoned.
func (p *Proxy) Abandon() int {
	p.flights.mu.Lock()
	list := make([]*exchange, 0, len(p.flights.set))
	for _, x := range p.flights.set {
		list = append(list, x)
	}
	p.flights.mu.Unlock()
	n := 0
	for _, x := range list {
		f := &x.flight
		_ = x.st.line.write(func(*lineSink) error {
			n++
			return p.AuditRefusal(Refusal{Client: f.client, Method: f.method, Target: f.url, UserAgent: f.userAgent,
				Reason: auditlog.ReasonShutdown, CutOff: auditlog.CutOffShutdown, Start: f.start,
				Err: errors.New("the handler did not return within the shutdown grace period")})
		})
	}
	return n
}

// cutOff returns the cut_off field of a request whose handler returned:
// auditlog.CutOffShutdown when shutdown cancelled its context, auditlog.CutOffBodyIdle when
// its body went idle, "" otherwise.
func cutOff(r *http.Request, body *idleBody) string {
	switch {
	case errors.Is(context.Cause(r.Context()), ErrShutdown):
		return auditlog.CutOffShutdown
	case body != nil && body.slow.Load():
		return auditlog.CutOffBodySlow
	case body != nil && body.idle.Load():
		return auditlog.CutOffBodyIdle
	}
	return ""
}

// cutOffCode is a cut_off value as a state keeps it.
type cutOffCode uint8

// The cut_off values a state keeps, in cutOffs' order.
const (
	cutOffNone cutOffCode = iota
	cutOffShutdown
	cutOffBodySlow
	cutOffBodyIdle
)

var cutOffs = [...]string{"", auditlog.CutOffShutdown, auditlog.CutOffBodySlow, auditlog.CutOffBodyIdle}

// cutOffOf returns the code of a cut_off value returned by cutOff.
func cutOffOf(s string) cutOffCode {
	for i, v := range cutOffs {
		if v == s {
			return cutOffCode(i)
		}
	}
	return cutOffNone
}

// String returns the cut_off value, "" for none.
func (c cutOffCode) String() string { return cutOffs[c] }

// bodyOf returns the watched body of req, nil when it has none.
func bodyOf(req *http.Request) *idleBody {
	b, _ := req.Body.(*idleBody)
	return b
}

// cutOffResponse answers a request whose round trip failed because the
// proxy cut it off: 503 Service Unavailable when shutdown cancelled it, 408
// Request Timeout when its body went idle. Nil otherwise.
func cutOffResponse(req *http.Request) *http.Response {
	b := bodyOf(req)
	status, text := http.StatusRequestTimeout, ""
	switch cutOff(req, b) {
	case "":
		return nil
	case auditlog.CutOffShutdown:
		status, text = http.StatusServiceUnavailable, "robotsproxy: the proxy is shutting down; the request was cut off, retry later\n"
	case auditlog.CutOffBodySlow:
		text = fmt.Sprintf("robotsproxy: the request body came slower than %d octets/s; the request was cut off\n", b.minRate)
	case auditlog.CutOffBodyIdle:
		text = fmt.Sprintf("robotsproxy: no request body octet for %s; the request was cut off\n", b.timeout)
	}
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Connection", "close")
	return textResponse(req, status, h, text)
}
