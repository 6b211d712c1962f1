package policy

import (
	"errors"
	"fmt"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// This file decides the requests that are refused before robots.txt is
// consulted, by the proxy's own limits and state: a request target or
// header over the client limits, an audit log that cannot be written, a
// shutdown, an address the dial-time guard refused. The proxy renders
// these decisions as it renders every other.

// DecideTargetTooLong decides a request whose target is length octets,
// over limit (client.max_request_target_bytes): denied, reason
// uri-too-long (HTTP 414), before any other step. Of r only the identity
// is read (User-Agent and Pin).
func (p *Policy) DecideTargetTooLong(r Request, length, limit int) Decision {
	return Decision{Reason: auditlog.ReasonURITooLong, Identity: p.IdentityOf(r),
		Err: fmt.Errorf("the request target is %d octets, longer than the limit of %d (client.max_request_target_bytes)", length, limit)}
}

// DecideHeaderTooLarge decides a request whose line and header fields are
// size octets, over limit (client.max_header_bytes) and the slack octets
// the HTTP server reads past it: denied, reason header-too-large (HTTP
// 431), before any other step. Of r only the identity is read.
func (p *Policy) DecideHeaderTooLarge(r Request, size, limit, slack int) Decision {
	return Decision{Reason: auditlog.ReasonHeaderTooLarge, Identity: p.IdentityOf(r),
		Err: fmt.Errorf("the request line and headers are %d octets, over the limit of %d (client.max_header_bytes) and its %d octets of slack",
			size, limit, slack)}
}

// errAuditUnavailable is the error of reason audit-unavailable.
var errAuditUnavailable = errors.New("the audit log cannot be written (audit.on_write_error: refuse)")

// DecideAuditUnavailable decides a request that arrives while the audit
// log cannot be written and audit.on_write_error is refuse: denied, reason
// audit-unavailable (HTTP 503), never forwarded, since no request goes
// without its audit line. Of r only the identity is read.
func (p *Policy) DecideAuditUnavailable(r Request) Decision {
	return Decision{Reason: auditlog.ReasonAuditUnavailable, Identity: p.IdentityOf(r), Err: errAuditUnavailable}
}

// DecideShutdown turns d into the refusal of a request the proxy shut down
// before it was forwarded (reason shutdown): it is answered 503, or cut
// off, and never reaches the origin, whatever the mode.
func DecideShutdown(d *Decision) {
	d.Allowed, d.ReportOnly, d.Reason = false, false, auditlog.ReasonShutdown
}

// DecideDialRefused turns d, the decision of a request that was being
// forwarded, into a denial with reason destination-refused: the
// destination guard refused the address dialled (err; a DNS answer that
// changed after the robots.txt fetch). It is enforced whatever the mode:
// the destination policy is the operator's, never robots.txt's.
func DecideDialRefused(d *Decision, err error) {
	d.Allowed, d.Reason, d.Err = false, auditlog.ReasonDestination, err
	d.ReportOnly = false
}

// DecideBadTarget turns d into a denial with reason bad-request: the
// target it allowed cannot be read as it was decided (err), so it is not
// reached. Only d's identity is kept.
func DecideBadTarget(d *Decision, err error) {
	*d = Decision{Identity: d.Identity, Reason: auditlog.ReasonBadRequest, Err: err}
}
