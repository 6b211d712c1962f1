package auditlog

// Reason is a value of FieldReason (and of FieldRobotsReason and
// FieldWaitReason, which take a subset): why a request was allowed or
// denied. policy.Reason is this type. The Reason* constants below are
// every reason's one declaration; they are untyped, so that a reason read
// from a line (a string) compares with them as it is.
type Reason string

// The reasons (values of Reason; the proxy writes ReasonNotProxied itself).
const (
	// ReasonRule: an allow or disallow rule matched (the longest match).
	ReasonRule = "rule"
	// ReasonNoMatch: no rule matched the path, or no group applied; the
	// path is allowed (RFC 9309 2.2.1, 2.2.2).
	ReasonNoMatch = "no-matching-rule"
	// ReasonUnavailable: robots.txt was unavailable; everything is allowed
	// (RFC 9309 2.3.1.3).
	ReasonUnavailable = "unavailable"
	// ReasonUnreachable: robots.txt was unreachable; complete disallow
	// (RFC 9309 2.3.1.4).
	ReasonUnreachable = "unreachable"
	// ReasonImplicit: the request is for /robots.txt, which is always
	// allowed (RFC 9309 2.2.2).
	ReasonImplicit = "implicit-robots-txt"
	// ReasonOverride: the operator's configuration exempts the host.
	ReasonOverride = "override"
	// ReasonDestination: the destination resolves to a refused address.
	ReasonDestination = "destination-refused"
	// ReasonBadRequest: the request URL cannot be enforced.
	ReasonBadRequest = "bad-request"
	// ReasonHostDenied: the host is on the deny list, or not on a non-empty
	// allow list.
	ReasonHostDenied = "host-denied"
	// ReasonConnectRefused: the configuration refuses every CONNECT.
	ReasonConnectRefused = "connect-refused"
	// ReasonConnectPort: CONNECT to a port outside the allowed ones.
	ReasonConnectPort = "connect-port"
	// ReasonUnidentifiedTunnel: a CONNECT with no product token and no pin,
	// refused when connect.require_identity is on.
	ReasonUnidentifiedTunnel = "unidentified-tunnel"
	// ReasonIntercept: a CONNECT tunnel that is intercepted.
	ReasonIntercept = "intercept"
	// ReasonAuthRequired: proxy authentication is required and the request
	// has none (HTTP 407).
	ReasonAuthRequired = "proxy-auth-required"
	// ReasonAuthFailed: the request's proxy credentials are wrong (HTTP 407).
	ReasonAuthFailed = "proxy-auth-failed"
	// ReasonAuthThrottled: too many failed proxy authentication attempts
	// (HTTP 429).
	ReasonAuthThrottled = "proxy-auth-throttled"
	// ReasonURITooLong: the request target is longer than
	// client.max_request_target_bytes (HTTP 414).
	ReasonURITooLong = "uri-too-long"
	// ReasonHeaderTooLarge: the request line and headers exceed
	// client.max_header_bytes (HTTP 431).
	ReasonHeaderTooLarge = "header-too-large"
	// ReasonMalformed: the HTTP server could not parse the request.
	ReasonMalformed = "malformed-request"
	// ReasonClientTimeout: the client stopped sending its request line
	// and headers for client.read_header_timeout (status 0).
	ReasonClientTimeout = "client-timeout"
	// ReasonShutdown: the proxy shut down before the request was decided.
	ReasonShutdown = "shutdown"
	// ReasonCrawlDelay: politeness held or refused the request for the
	// robots.txt crawl delay.
	ReasonCrawlDelay = "crawl-delay"
	// ReasonBackoff: politeness held or refused the request because the
	// origin asked the product token to slow down.
	ReasonBackoff = "backoff"
	// ReasonHostConcurrency: politeness held or refused the request for
	// politeness.max_concurrent_per_host.
	ReasonHostConcurrency = "host-concurrency"
	// ReasonUsage: a declared purpose is one the site refuses for the
	// path (usage.enforce; HTTP 403).
	ReasonUsage = "usage-preference"
	// ReasonAuditUnavailable: the audit log could not be written
	// (audit.on_write_error: refuse), so the request was not forwarded
	// (HTTP 503).
	ReasonAuditUnavailable = "audit-unavailable"
	// ReasonNotProxied: the proxy decided nothing (FieldDecision is
	// DecisionNone): a request it does not proxy.
	ReasonNotProxied = "not-proxied"
)

// Reasons of RSL licenses (package license).
const (
	// ReasonLicense: the RSL license robots.txt names prohibits a
	// declared purpose for the path, or could not be read (fail closed)
	// (usage.enforce; HTTP 403).
	ReasonLicense = "license"
	// ReasonLicenseRequired: the license's content element for the path
	// names a License Server: a license token is required, which
	// robotsproxy does not obtain (usage.enforce; HTTP 403).
	ReasonLicenseRequired = "license-required"
)
