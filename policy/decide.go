package policy

import (
	"net/http"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"

	"github.com/robotsproxy/robotsproxy/robots"
)

// DecideAccess is the decision table of RFC 9309 for one request path: it
// turns a robots.txt access result, the request path as sent (path and
// query, still percent-encoded, "" meaning "/"; see RequestPath) and the
// crawler's product tokens (most specific first, see Identity.Candidates)
// into a decision. It is pure: the same arguments give the same decision.
// check, the proxy (Policy.Decide) and audit verify all decide through it.
//
//   - Every reading of the path names /robots.txt: allowed, reason
//     implicit-robots-txt (RFC 9309 2.2.2), whatever a says; a may be nil.
//   - a is Successful: the rules of a.Robots decide the path under every
//     reading an origin may take of it (see MatchPath), reason rule, or
//     no-matching-rule when no rule matched (RFC 9309 2.2.2).
//   - a is Unavailable: allowed, reason unavailable (RFC 9309 2.3.1.3).
//   - Anything else (Unreachable, nil, an unknown result): denied, reason
//     unreachable, or destination-refused when the destination guard
//     refused the robots.txt fetch's address (RFC 9309 2.3.1.4: complete
//     disallow).
//
// The decision carries the access result's evidence (Access, Status, Err,
// RobotsSHA256, RobotsFetchedAt, Robots) and the path reading that decided
// (ResolvedPath). Identity, RobotsURL and Cache are left for the caller.
func DecideAccess(a *Access, path string, tokens []string) Decision {
	rs := readPath(path)
	return decideAccess(a, &rs, tokens)
}

// decideAccess is DecideAccess on a path already read: Policy.decide reads
// the path once, to see whether robots.txt must be fetched at all.
func decideAccess(a *Access, rs *readings, tokens []string) Decision {
	d := Decision{ResolvedPath: rs.resolved}
	if rs.robotsTxt() {
		// RFC 9309 2.2.2: the /robots.txt URI is implicitly allowed, when
		// every reading of the path names it.
		d.Allowed, d.Reason = true, auditlog.ReasonImplicit
		return d
	}
	if a == nil {
		d.Reason = auditlog.ReasonUnreachable // RFC 9309 2.3.1.4: no result, complete disallow
		return d
	}
	d.Access, d.Status, d.Err, d.Cause = a.Result, a.Status, a.Err, a.Cause
	d.RobotsSHA256, d.RobotsFetchedAt = a.SHA256, a.FetchedAt // the evidence
	switch a.Result {
	case Successful:
		if a.Robots == nil {
			d.Reason = auditlog.ReasonUnreachable // no rules to read: fail closed
			break
		}
		d.Verdict, d.ResolvedPath = rs.match(a.Robots, tokens)
		d.Robots = a.Robots
		readExtras(&d, a.Robots, rs, tokens)
		d.Allowed, d.Reason = d.Verdict.Allowed, auditlog.ReasonRule
		if !d.Verdict.Matched() {
			d.Reason = auditlog.ReasonNoMatch
		}
	case Unavailable:
		d.Allowed, d.Reason = true, auditlog.ReasonUnavailable // RFC 9309 2.3.1.3
	default:
		d.Reason = auditlog.ReasonUnreachable // RFC 9309 2.3.1.4: complete disallow
		if a.Refused {
			d.Reason = auditlog.ReasonDestination
		}
	}
	return d
}

// RequestPath returns the path and query a request is decided on, from its
// request target exactly as the client sent it (the proxy's request line,
// or the url field of an audit line), so no decoding or re-encoding happens
// before RFC 9309 normalisation. An origin-form target ("/a?b", inside an
// intercepted tunnel) is the path itself: "//x/y" is a path there, not an
// authority (RFC 9112 3.2.1). An absolute-form target gives the path and
// query after its authority ("/" when it has none). A "#" in a target is no
// fragment delimiter: it is forwarded as "%23", so it is matched as that.
// "" gives "/". A CONNECT is decided on "/" (see DecideConnect), not
// through RequestPath.
func RequestPath(target string) string {
	if target == "" {
		return "/"
	}
	t := target
	if strings.IndexByte(t, '#') >= 0 {
		t = strings.ReplaceAll(t, "#", "%23")
	}
	if strings.HasPrefix(t, "/") {
		return t
	}
	return robots.PathOf(t)
}

// HTTPRequestPath returns the path and query req is decided on: its
// request target exactly as the client sent it (RequestPath of
// req.RequestURI), or, for a request that has none (one made in process,
// or whose target a proxy has cleared before sending it on), its URL's
// path and query as parsed.
func HTTPRequestPath(req *http.Request) string {
	if req.RequestURI != "" {
		return RequestPath(req.RequestURI)
	}
	p := req.URL.EscapedPath()
	if req.URL.RawQuery != "" || req.URL.ForceQuery {
		p += "?" + req.URL.RawQuery
	}
	return p
}
