package policy

import "strconv"

// Cause is the class of failure that made a robots.txt Unreachable (RFC
// 9309 2.3.1.4), for the client and the operator to act on: the 403 says
// it in a header and its text, the audit line in a field. The fetcher
// computes it once, where it classifies the fetch. The zero value is no
// cause: every result but Unreachable. A small integer, so that it adds
// nothing to a cached Access.
type Cause uint8

const (
	// CauseNone: the file is not unreachable.
	CauseNone Cause = iota
	// CauseDNS: the host name did not resolve ("dns").
	CauseDNS
	// CauseConnect: the TCP connection failed (refused, reset, no
	// route) or closed before a response came ("connect").
	CauseConnect
	// CauseTLS: the TLS handshake failed (an untrusted or mismatched
	// certificate, no shared protocol version or cipher suite, a plain
	// HTTP answer) ("tls").
	CauseTLS
	// CauseTimeout: the fetch took longer than the connect timeout or
	// the whole-fetch timeout (robots.connect_timeout, robots.timeout)
	// ("timeout").
	CauseTimeout
	// CauseStatus: the origin answered with a status that makes the file
	// unreachable (5xx, 429 when so configured, a 3xx without a usable
	// Location); rendered with the status, "status 500" (see Text).
	CauseStatus
	// CauseTooLarge: the response header was larger than
	// the fetcher allows, 64 KiB ("too-large"). A body past the parse limit
	// is cut, not refused (RFC 9309 2.5).
	CauseTooLarge
	// CauseRedirects: a redirect could not be followed (a Location that
	// is not an http or https URL, for one) ("redirects").
	CauseRedirects
	// CauseDestination: the destination guard refused an address the
	// name resolved to; the decision's reason is then
	// "destination-refused" ("destination-refused").
	CauseDestination
	// CauseOther: any other failure (a malformed response, for one); the
	// error itself is in the audit line's "error" ("other").
	CauseOther
)

// causeNames are the causes' names, by value.
var causeNames = [...]string{CauseNone: "", CauseDNS: "dns", CauseConnect: "connect", CauseTLS: "tls",
	CauseTimeout: "timeout", CauseStatus: "status", CauseTooLarge: "too-large", CauseRedirects: "redirects",
	CauseDestination: "destination-refused", CauseOther: "other"}

// String returns the cause's name ("dns", "status", ...), "" for
// CauseNone.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return causeNames[CauseOther]
}

// Text returns the cause as the client and the audit line see it: "status
// N" for CauseStatus with the fetch's HTTP status, the cause's name
// otherwise, "" for CauseNone.
func (c Cause) Text(status int) string {
	if c == CauseStatus {
		return "status " + strconv.Itoa(status)
	}
	return c.String()
}

// ParseCause returns the cause named name (as String returns it), and
// false when no cause has that name.
func ParseCause(name string) (Cause, bool) {
	for c, n := range causeNames {
		if n == name {
			return Cause(c), true
		}
	}
	return CauseNone, false
}
