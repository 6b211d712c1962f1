package policy

import "github.com/robotsproxy/robotsproxy/robots"

// Reason says why a request was allowed or denied.
type Reason string

const (
	// ReasonRule: an allow or disallow rule matched (the longest match).
	ReasonRule Reason = "rule"
	// ReasonNoMatch: no rule matched the path, or no group applied; the
	// path is allowed (RFC 9309 2.2.1, 2.2.2).
	ReasonNoMatch Reason = "no-matching-rule"
	// ReasonUnavailable: robots.txt was unavailable; everything is allowed
	// (RFC 9309 2.3.1.3).
	ReasonUnavailable Reason = "unavailable"
	// ReasonUnreachable: robots.txt was unreachable; complete disallow
	// (RFC 9309 2.3.1.4).
	ReasonUnreachable Reason = "unreachable"
	// ReasonImplicit: the request is for /robots.txt, which is always
	// allowed (RFC 9309 2.2.2).
	ReasonImplicit Reason = "implicit-robots-txt"
	// ReasonOverride: the operator's configuration exempts the host.
	ReasonOverride Reason = "override"
	// ReasonDestination: the destination resolves to a refused address
	// (loopback, private, link-local, ...).
	ReasonDestination Reason = "destination-refused"
	// ReasonBadRequest: the request URL cannot be enforced (no host, or a
	// scheme robots.txt does not cover).
	ReasonBadRequest Reason = "bad-request"
	// ReasonHostDenied: the host is on the deny list, or not on a non-empty
	// allow list.
	ReasonHostDenied Reason = "host-denied"
	// ReasonConnectRefused: the configuration refuses every CONNECT.
	ReasonConnectRefused Reason = "connect-refused"
	// ReasonConnectPort: CONNECT to a port outside the allowed ones.
	ReasonConnectPort Reason = "connect-port"
	// ReasonIntercept: a CONNECT tunnel that is intercepted; each request
	// inside it is decided on its own.
	ReasonIntercept Reason = "intercept"
	// ReasonAuthRequired: proxy authentication is required and the request
	// has none (HTTP 407).
	ReasonAuthRequired Reason = "proxy-auth-required"
	// ReasonAuthFailed: the request's proxy credentials are wrong (HTTP 407).
	ReasonAuthFailed Reason = "proxy-auth-failed"
)

// NeedsAuth reports whether the decision is a proxy authentication failure,
// answered with 407 Proxy Authentication Required.
func (d *Decision) NeedsAuth() bool {
	return d.Reason == ReasonAuthRequired || d.Reason == ReasonAuthFailed
}

// Decision is the verdict on one request and everything that explains it.
// The 403 response, the audit log line, the metrics labels and check -json
// are all rendered from it.
type Decision struct {
	// Allowed is the verdict.
	Allowed bool
	// Reason says why.
	Reason Reason
	// Identity is who the crawler is.
	Identity Identity
	// Verdict is the matcher's answer; zero unless Access is Successful.
	Verdict robots.Verdict
	// RobotsURL is the robots.txt URL of the request's authority.
	RobotsURL string
	// Access is the access result in force, "" when none was needed.
	Access AccessResult
	// Status is the HTTP status of that robots.txt fetch, 0 when none.
	Status int
	// Cache says where the access result came from.
	Cache CacheState
	// Err is the fetch or request error behind the decision, if any.
	Err error
}

// Rule returns the deciding rule, or nil.
func (d *Decision) Rule() *robots.Rule {
	if !d.Verdict.Matched() {
		return nil
	}
	return &d.Verdict.Rule
}
