package auditlog

// Field names of the audit line. A line always has FieldClient,
// FieldMethod, FieldURL, FieldUserAgent, FieldDecision, FieldReason and,
// last, FieldStatus, FieldBytes, FieldDurationMS and FieldTime; the others
// appear when they apply. Names are a fixed interface: add, never rename.
const (
	// FieldClient is the client's address, host:port.
	FieldClient = "client"
	// FieldMethod is the request method.
	FieldMethod = "method"
	// FieldURL is the request target as sent (absolute form, or the
	// authority of a CONNECT), or the URL goproxy built inside an
	// intercepted tunnel.
	FieldURL = "url"
	// FieldUserAgent is the request's User-Agent header field.
	FieldUserAgent = "user_agent"
	// FieldToken is the product token the request was decided for.
	FieldToken = "product_token"
	// FieldTokenSource says how the product token was found.
	FieldTokenSource = "token_source"
	// FieldCandidates are the product tokens robots.txt groups were
	// looked up for, a list of strings.
	FieldCandidates = "candidates"
	// FieldDecision is DecisionAllow, DecisionDeny or DecisionNone.
	FieldDecision = "decision"
	// FieldEnforced is false when a denial was only reported (report
	// mode); absent means true.
	FieldEnforced = "enforced"
	// FieldPathResolved is the path reading that decided, when it is not
	// the path as sent.
	FieldPathResolved = "path_resolved"
	// FieldReason says why: one of the Reason values.
	FieldReason = "reason"
	// FieldGroup is the robots.txt group that applied (its user-agent).
	FieldGroup = "group"
	// FieldFallback is true when the star group applied for want of one
	// naming the crawler.
	FieldFallback = "star_fallback"
	// FieldRule is the deciding rule, as written in robots.txt.
	FieldRule = "rule"
	// FieldRuleLine is the deciding rule's line number in robots.txt.
	FieldRuleLine = "rule_line"
	// FieldRobotsURL is the robots.txt URL of the request's authority.
	FieldRobotsURL = "robots_url"
	// FieldAccess is the access result in force (RFC 9309 2.3.1):
	// successful, unavailable or unreachable.
	FieldAccess = "access_result"
	// FieldRobotsStatus is the HTTP status of the robots.txt fetch, 0
	// when none.
	FieldRobotsStatus = "robots_status"
	// FieldCache says where the access result came from.
	FieldCache = "cache"
	// FieldRobotsSHA256 is the SHA-256 of the robots.txt body in force,
	// in lower-case hex.
	FieldRobotsSHA256 = "robots_sha256"
	// FieldRobotsFetchedAt is when the robots.txt in force was fetched
	// (RFC 3339 with nanoseconds, UTC).
	FieldRobotsFetchedAt = "robots_fetched_at"
	// FieldStatus is the HTTP status sent to the client, 0 when none.
	FieldStatus = "status"
	// FieldBytes is the response body size sent, in octets, -1 when
	// unknown.
	FieldBytes = "bytes"
	// FieldDurationMS is how long the request took, in milliseconds to
	// the microsecond.
	FieldDurationMS = "duration_ms"
	// FieldTunnel describes a CONNECT tunnel.
	FieldTunnel = "tunnel"
	// FieldIntercepted is true on a request read inside an intercepted
	// tunnel.
	FieldIntercepted = "intercepted"
	// FieldProtocol is the HTTP version the client sent the request in:
	// one of the Protocol values (absent when the request was not read
	// far enough to tell).
	FieldProtocol = "protocol"
	// FieldUser is the proxy user the request authenticated as.
	FieldUser = "user"
	// FieldError is what went wrong, if known.
	FieldError = "error"
	// FieldCutOff is set on a request the proxy cut off before it
	// completed: one of the CutOff values.
	FieldCutOff = "cut_off"
	// FieldTime is when the request finished, in RFC 3339 with seconds.
	FieldTime = "time"

	// FieldUsage is the combined preference per purpose that applied to
	// the request, from robots.txt and the response's Content-Usage
	// header field: {"train-ai":"n","search":"y"}.
	FieldUsage = "usage"
	// FieldUsageLines are the statements behind FieldUsage, each as
	// "line N: TEXT" (robots.txt) or "header: TEXT".
	FieldUsageLines = "usage_lines"
	// FieldPurposes are the purposes declared for the crawler.
	FieldPurposes = "purposes"
	// FieldUsageRefused is the first declared purpose robots.txt refuses,
	// whether or not usage.enforce denied the request for it.
	FieldUsageRefused = "usage_refused"
	// FieldUsageRule is the statement that refused it.
	FieldUsageRule = "usage_rule"

	// FieldWaitedMS is how long politeness held the request, in
	// milliseconds (crawl delay, back-off pause, in-flight cap).
	FieldWaitedMS = "waited_ms"
	// FieldWaitReason is what held it longest: ReasonCrawlDelay,
	// ReasonBackoff or ReasonHostConcurrency.
	FieldWaitReason = "wait_reason"
	// FieldCrawlDelayMS is the crawl delay applied to the request, in
	// milliseconds.
	FieldCrawlDelayMS = "crawl_delay_ms"
	// FieldBackoffMS is the pause the origin's answer (429, or 503 with
	// Retry-After) started for the product token at the authority, in
	// milliseconds.
	FieldBackoffMS = "backoff_ms"
	// FieldRetryAfterMS is how long a request refused with 429 was told
	// to wait (its Retry-After, before rounding up to seconds).
	FieldRetryAfterMS = "retry_after_ms"
	// FieldRobotsReason is robots.txt's reason for a request that
	// politeness held (its FieldReason is then the wait's cause): what
	// audit verify re-decides and audit report counts.
	FieldRobotsReason = "robots_reason"
	// FieldUnreachableCause is why the robots.txt in force was
	// unreachable ("dns", "connect", "tls", "timeout", "status 500",
	// "too-large", ...; see policy.Cause), on lines whose access_result is
	// "unreachable" and whose cause is known.
	FieldUnreachableCause = "unreachable_cause"

	// FieldSignatureKeyID is the keyid (the JWK SHA-256 thumbprint, RFC
	// 7638) of the key robotsproxy signed the forwarded request with (Web
	// Bot Auth); absent when it did not sign it.
	FieldSignatureKeyID = "signature_keyid"
	// FieldSignatureCreated is that signature's created parameter, in
	// seconds since the Unix epoch.
	FieldSignatureCreated = "signature_created"
	// FieldPrice is the price a 402 answer asked (its crawler-price
	// amount, pay per crawl), a decimal string.
	FieldPrice = "price"
	// FieldCharged is the amount the origin charged (its crawler-charged
	// field), a decimal string; absent when nothing was charged.
	FieldCharged = "charged"
	// FieldCurrency is the currency of FieldCharged or FieldPrice (ISO
	// 4217 code).
	FieldCurrency = "currency"
	// FieldNotPaid says why a 402 reached the client unpaid: one of the
	// NotPaid values.
	FieldNotPaid = "not_paid"
	// FieldPaymentBreach marks an answer whose charge breaks the pay per
	// crawl agreement: one of the PaymentBreach values. FieldCharged
	// still says what the origin charged.
	FieldPaymentBreach = "payment_breach"
	// FieldEgressSkipped is set on a request the egress steps (signing,
	// paying) left alone: EgressSkippedReportOnly.
	FieldEgressSkipped = "egress_skipped"
)

// Values of FieldPaymentBreach. Either blocks payments to the host for
// payments.breach_block.
const (
	// PaymentBreachOverAgreed: the origin charged more than the
	// crawler-exact-price robotsproxy agreed to, or in another currency.
	PaymentBreachOverAgreed = "over-agreed"
	// PaymentBreachUnasked: the origin charged on an answer robotsproxy
	// agreed to no price for (a first request, a 402, a report-only
	// request).
	PaymentBreachUnasked = "unasked"
)

// Values of FieldEgressSkipped.
const (
	// EgressSkippedReportOnly: the request was denied and forwarded only
	// because the mode is report: it was neither signed nor paid for.
	EgressSkippedReportOnly = "report-only"
)

// Suffixes of the fields that mark a bounded field that was cut: a cut
// field KEY is followed by KEY_truncated: true and, when known, KEY_length,
// its original length (octets for a string, entries for a list).
const (
	TruncatedSuffix = "_truncated"
	LengthSuffix    = "_length"
)

// Values of FieldDecision.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	// DecisionNone: the proxy decided nothing (a request it does not
	// proxy).
	DecisionNone = "none"
)

// Values of FieldCutOff.
const (
	// CutOffShutdown: the proxy was shutting down and the request was still
	// being served when client.shutdown_timeout expired.
	CutOffShutdown = "shutdown"
	// CutOffBodyIdle: the client sent no request body octet for
	// client.body_idle_timeout.
	CutOffBodyIdle = "body-idle"
	// CutOffBodySlow: the request body came slower than
	// client.body_min_rate on average after its first body_idle_timeout.
	CutOffBodySlow = "body-slow"
)

// Values of FieldNotPaid: why a priced answer (402 with crawler-price,
// pay per crawl) reached the client unpaid. The client sees the same
// value in the X-Robotsproxy-Not-Paid header field.
const (
	// NotPaidNoBudget: payments.identities has no entry for the identity.
	NotPaidNoBudget = "no-budget"
	// NotPaidCurrency: the price is in another currency than the
	// identity's budget.
	NotPaidCurrency = "currency"
	// NotPaidOverMaxPrice: the price exceeds the identity's max_price.
	NotPaidOverMaxPrice = "over-max-price"
	// NotPaidOverBudget: what is left of the identity's budget for the
	// UTC day is less than the price.
	NotPaidOverBudget = "over-budget"
	// NotPaidStoreUnavailable: the spend ledger (the shared store) did
	// not answer; nothing is paid while it does not.
	NotPaidStoreUnavailable = "store-unavailable"
	// NotPaidBadPrice: the 402 had no crawler-price, or one that does
	// not read as "CUR AMOUNT".
	NotPaidBadPrice = "bad-price"
	// NotPaidBody: the request body cannot be sent again (larger than
	// the proxy buffers), so the request cannot be retried.
	NotPaidBody = "body-not-replayable"
	// NotPaidPriceChanged: the paid retry got a 402 with another price.
	NotPaidPriceChanged = "price-changed"
	// NotPaidRefused: the paid retry was answered without a charge (a
	// crawler-error, another 402, a status without crawler-charged).
	NotPaidRefused = "refused"
	// NotPaidRetryFailed: the paid retry failed before an answer (a
	// network error); the client gets the proxy's error answer.
	NotPaidRetryFailed = "retry-failed"
	// NotPaidUnknownOutcome: the paid retry was sent and then failed
	// before an answer (a network error, the client left), or its
	// crawler-charged was unreadable: the origin may have charged, so the
	// agreed amount stays counted against the budget.
	NotPaidUnknownOutcome = "unknown-outcome"
	// NotPaidBreach: the host breached the protocol (FieldPaymentBreach)
	// on this answer or within payments.breach_block before it: nothing
	// is paid to it.
	NotPaidBreach = "breach"
	// NotPaidReportOnly: the request was forwarded only because the mode
	// is report; nothing is paid for it. The client gets the 402 without
	// the X-Robotsproxy-Not-Paid field, so that it cannot tell.
	NotPaidReportOnly = "report-only"
)

// Values of FieldAccess: the access result in force (RFC 9309 2.3.1).
const (
	// AccessSuccessful: robots.txt was fetched (RFC 9309 2.3.1.1).
	AccessSuccessful = "successful"
	// AccessUnavailable: robots.txt is unavailable (4xx); everything is
	// allowed (RFC 9309 2.3.1.3).
	AccessUnavailable = "unavailable"
	// AccessUnreachable: robots.txt is unreachable (5xx, network error);
	// everything is disallowed (RFC 9309 2.3.1.4).
	AccessUnreachable = "unreachable"
)

// Values of FieldProtocol. HTTP/2 is spoken only inside intercepted
// tunnels (ALPN h2); the proxy's listener speaks HTTP/1.
const (
	ProtocolHTTP10 = "HTTP/1.0"
	ProtocolHTTP11 = "HTTP/1.1"
	ProtocolHTTP2  = "HTTP/2"
)

// Values of FieldTunnel: how a CONNECT tunnel was served.
const (
	// TunnelHostLevel: the tunnel was decided for the host as a whole
	// (path "/") and its octets relayed unread.
	TunnelHostLevel = "host-level"
	// TunnelIntercepted: the tunnel was intercepted; each request inside
	// it is decided and audited on its own.
	TunnelIntercepted = "intercepted"
)

// Fields of the RSL license that robots.txt names, or that an earlier
// response for the same resource named in a Link header field (package
// license), present when one was read for the request's declared
// purposes.
const (
	// FieldLicenseURL is the license URL read: robots.txt's License line's
	// (FieldLicenseSource robots.txt) or a Link header field's (link).
	FieldLicenseURL = "license_url"
	// FieldLicenseSHA256 is the SHA-256 of the license document in force,
	// in hex: the key of its copy in the archive; absent when none was
	// read.
	FieldLicenseSHA256 = "license_sha256"
	// FieldLicenseFetchedAt is when that license was fetched (RFC 3339,
	// UTC): with FieldLicenseURL it names the archive's fetch record.
	FieldLicenseFetchedAt = "license_fetched_at"
	// FieldLicenseDecision is what the license says for the request: one
	// of permitted, prohibited, license-required, no-match, unavailable,
	// unreadable (policy.LicenseDecision).
	FieldLicenseDecision = "license_decision"
	// FieldLicenseElement is the content element that applied, as
	// <content url="..." server="...">.
	FieldLicenseElement = "license_element"
	// FieldLicenseRefused is the declared purpose the license prohibits.
	FieldLicenseRefused = "license_refused"
	// FieldLicenseError is why the license could not be read (unreadable)
	// or was unavailable.
	FieldLicenseError = "license_error"
	// FieldLicenseLink is the license a response named in a Link header
	// field (rel="license", type="application/rsl+xml"): recorded on the
	// line of that response, which it cannot deny; later requests for the
	// same resource with declared purposes read it (FieldLicenseSource
	// link).
	FieldLicenseLink = "license_link"
	// FieldLicenseSource is where the license of FieldLicenseURL was
	// named: "robots.txt" (a License line) or "link" (a Link header field
	// of an earlier response for the same resource; policy.LicenseSource).
	FieldLicenseSource = "license_source"
)
