package policy

import (
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Reason says why a request was allowed or denied: a value of the audit
// line's reason field, declared once in package auditlog, the schema
// (auditlog.ReasonRule, auditlog.ReasonUnreachable, ...). The 403, the
// audit line, the metrics labels and check -json all show it as it is.
type Reason = auditlog.Reason

// NeedsAuth reports whether the decision is a proxy authentication failure,
// answered with 407 Proxy Authentication Required.
func (d *Decision) NeedsAuth() bool {
	return d.Reason == auditlog.ReasonAuthRequired || d.Reason == auditlog.ReasonAuthFailed
}

// Decision is the verdict on one request and everything that explains it.
// The 403 response, the audit log line, the metrics labels and check -json
// are all rendered from it.
type Decision struct {
	// Allowed is the verdict.
	Allowed bool
	// ReportOnly is true when the request is denied but forwarded anyway:
	// a robots.txt denial (reason rule or unreachable) in report mode (see
	// Mode). The zero value enforces, so a decision made on any other path
	// fails closed. The audit line shows it as "enforced": !ReportOnly.
	ReportOnly bool
	// HasCrawlDelay is true when robots.txt states a crawl delay for the
	// crawler: CrawlDelay.
	HasCrawlDelay bool
	// Cause is why the robots.txt in force was unreachable, CauseNone
	// unless Access is Unreachable (see UnreachableCause). Next to the
	// flags: the request's state keeps its size class.
	Cause Cause
	// Reason says why.
	Reason Reason
	// RobotsReason is robots.txt's reason when the politeness step
	// (DecideAdmission) made Reason its own: the request waited for its
	// turn, or was refused. "" otherwise. The audit line shows it as
	// robots_reason.
	RobotsReason Reason
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
	// RobotsSHA256 is the SHA-256 of the robots.txt body in force (see
	// Access.SHA256), zero when none was read: the key of that body in
	// the robots.txt archive. The audit line shows it as robots_sha256.
	RobotsSHA256 [32]byte
	// RobotsFetchedAt is when the access result in force was fetched,
	// zero when none was needed: with RobotsURL it names the archive's
	// fetch record. The audit line shows it as robots_fetched_at.
	RobotsFetchedAt time.Time
	// RetryAfter is how long a throttled client should wait before it
	// tries again; zero unless TooManyRequests.
	RetryAfter time.Duration
	// Robots is the robots.txt in force, nil unless Access is Successful.
	// What it says beyond allow and disallow for the request is read from
	// it once, when deciding: CrawlDelay and UsagePrefs.
	Robots *robots.Robots
	// CrawlDelay is the crawl-delay robots.txt states for the crawler
	// (robots.GroupExtras.CrawlDelay: the largest of the groups that
	// apply), valid when HasCrawlDelay.
	CrawlDelay time.Duration
	// UsagePrefs are the usage preferences robots.txt states for the
	// request: those of its Content-Usage rules and Content-Signal lines
	// for the crawler's product tokens, read for the path reading that
	// decided (ResolvedPath), else for the path as sent. Nil when no
	// robots.txt was read or it states none. Shared: do not modify it.
	UsagePrefs Preferences
	// Usage is the purposes declared for the crawler and the usage
	// preferences that applied to the request (see package usage), nil
	// when none was declared and none stated; for auditlog.ReasonUsage,
	// Usage.Refused and Usage.Deciding say why.
	Usage *Usage
	// ResolvedPath is the request path as an origin may resolve it (dot
	// segments, empty segments, escaped dots and slashes; see MatchPath),
	// percent-normalised as rules are matched (RFC 9309 2.2.2): the reading
	// that decided when it is not the path as sent, else ResolvePath's
	// reading. "" when it equals the path as sent, or when the decision was
	// made before the path was read (bad request).
	ResolvedPath string
}

// TooManyRequests reports whether the decision is answered with 429 Too
// Many Requests and Retry-After (RFC 6585 4): throttled proxy
// authentication, or a politeness refusal.
func (d *Decision) TooManyRequests() bool {
	switch d.Reason {
	case auditlog.ReasonAuthThrottled, auditlog.ReasonCrawlDelay, auditlog.ReasonBackoff, auditlog.ReasonHostConcurrency:
		return !d.Allowed
	}
	return false
}

// RetryAfterSeconds returns RetryAfter in whole seconds, rounded up, for a
// Retry-After header (RFC 9110 10.2.3): at least 1 when the decision is
// answered with 429 (TooManyRequests), 0 otherwise.
func (d *Decision) RetryAfterSeconds() int64 {
	if !d.TooManyRequests() {
		return 0
	}
	return max(1, int64((d.RetryAfter+time.Second-1)/time.Second))
}

// UnreachableCause returns why the robots.txt in force was unreachable,
// as the 403 and the audit line show it ("dns", "tls", "status 500", ...;
// see Cause.Text), or "" when it was not unreachable or its cause
// is not known (a result shared by a replica that did not record it).
func (d *Decision) UnreachableCause() string {
	if d.Access != Unreachable {
		return ""
	}
	return d.Cause.Text(d.Status)
}

// Rule returns the deciding rule, or nil.
func (d *Decision) Rule() *robots.Rule {
	if !d.Verdict.Matched() {
		return nil
	}
	return &d.Verdict.Rule
}
