package proxy

import (
	"errors"
	"net/http"
	"sync"

	"github.com/rs/zerolog"
)

// requestAudit owns a request's guarantee of exactly one audit line.
// Every path that can end a request writes through it: the handler when
// it returns (serve), the read of a body's last octets (lastRead), a
// refused CONNECT (rejectConnect), a refused request target
// (refuseTarget) and shutdown (Abandon). The first writes the line; the
// others write nothing. The line is written under the lock, so that once
// Abandon returns no handler is writing to the audit log. The zero value
// is ready to use; it lives in the request's state.
type requestAudit struct {
	mu      sync.Mutex
	written bool
	failed  bool     // the line's write failed: it is not in the log
	sink    lineSink // the line's writer, here so that it is not allocated
}

// write runs line unless the request's line is written (or being
// written) already, and returns line's error: nil when it did not run.
func (a *requestAudit) write(line func(*lineSink) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.written {
		return nil
	}
	a.written = true
	err := line(&a.sink)
	a.failed = err != nil
	return err
}

// lost reports whether the request's line was written and its write
// failed.
func (a *requestAudit) lost() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

// lineSink is the writer of one audit line: it passes the line to the
// audit log in one Write and keeps that write's error, which zerolog's
// Send would drop (and print). It implements zerolog.LevelWriter.
type lineSink struct {
	p   *Proxy // writes to p.opts.Audit; a pointer keeps the request's state small
	err error
}

func (s *lineSink) Write(b []byte) (int, error) {
	_, s.err = s.p.opts.Audit.Write(b)
	return len(b), nil // the error is the caller's (lineEnd), not zerolog's
}

// WriteLevel implements zerolog.LevelWriter.
func (s *lineSink) WriteLevel(_ zerolog.Level, b []byte) (int, error) { return s.Write(b) }

// auditOnce writes the request's audit line (see audit) unless it is
// written already. The error is that of the line's write when this call
// wrote it: the line is then not in the log.
func (p *Proxy) auditOnce(r *http.Request, st *state, status int, bytes int64) error {
	return st.line.write(func(sink *lineSink) error { return p.audit(sink, r, st, status, bytes) })
}

// refusing reports whether a request must not be forwarded now: the
// audit log is failing, writing to it again (Recover) failed too, and
// audit.on_write_error is refuse. The first request after space returns
// is thus served, not refused.
func (p *Proxy) refusing() bool {
	if p.opts.AuditContinue || p.failing == nil || !p.failing() {
		return false
	}
	return p.recover == nil || p.recover() != nil
}

// cutsLost reports whether a request whose line was not written must
// not be completed (audit.on_write_error: refuse).
func (p *Proxy) cutsLost(st *state) bool {
	return !p.opts.AuditContinue && st.line.lost()
}

// errAuditLine is the read error that stops a body whose audit line was
// not written before its last octets: the client never gets them.
var errAuditLine = errors.New("the audit line was not written: the response is cut off (audit.on_write_error: refuse)")

// auditUnavailable records the denial of a request that is not forwarded
// because the audit log is failing, and returns its answer (503).
func (p *Proxy) auditUnavailable(req *http.Request, st *state) *http.Response {
	d := st.decide(p.policy().DecideAuditUnavailable(st.identityRequest(req)))
	return rejectResponse(req, d, p.opts.AuthRealm)
}
