package verify

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// auditLine holds the fields of an audit line (see proxy/auditline.go) that
// re-deciding it needs, as strings: parseLine reads them through
// auditlog.Project (lineFields) and copies them here.
type auditLine struct {
	Method              string
	URL                 string
	URLTruncated        bool
	Decision            string
	Reason              string
	Candidates          []string
	CandidatesTruncated bool
	RobotsURL           string
	RobotsURLTruncated  bool
	Group               string
	GroupTruncated      bool
	StarFallback        bool
	Rule                string
	RuleTruncated       bool
	RuleLine            int
	Access              string
	RobotsStatus        *int
	RobotsSHA256        string
	RobotsFetchedAt     string
	// RobotsReason is robots.txt's reason when politeness replaced the
	// line's reason (a request that waited or was refused: reason
	// crawl-delay, backoff or host-concurrency): what is re-decided.
	RobotsReason string
	// Purposes are the purposes declared for the crawler, UsageRefused
	// the one robots.txt refused (reason usage-preference).
	Purposes     []string
	UsageRefused string
	// LicenseURL, LicenseSHA256, LicenseDecision and LicenseRefused are
	// the RSL license fields (reasons license and license-required).
	LicenseURL, LicenseSHA256, LicenseDecision, LicenseRefused string
	// LicenseSource is where the license was named: "robots.txt", "link",
	// or "" on lines written before the field (robots.txt).
	LicenseSource string
	// SignatureKeyID and SignatureCreated are the line's signature_keyid
	// and signature_created (seconds since the epoch; HasCreated when the
	// line has it): the key the proxy signed the request with.
	SignatureKeyID   string
	SignatureCreated int64
	HasCreated       bool

	in  interner       // interns the values read (see parseLine)
	src *auditlog.Line // the line as auditlog projects it, reused
}

// isDecision reports whether the line carries a decision that verify
// re-decides: one robots.txt makes (a rule, no matching rule, the access
// result, /robots.txt itself), the configuration's exemption (override),
// and the reasons that replace robots.txt's on the line: politeness
// (whose robots_reason is re-decided), a usage preference and an RSL
// license. A line that
// allows for any other reason is one too, and fails: only an intercepted
// CONNECT (whose requests have lines of their own) allows otherwise.
func (l *auditLine) isDecision() bool {
	switch policy.Reason(l.Reason) {
	case auditlog.ReasonRule, auditlog.ReasonNoMatch, auditlog.ReasonUnavailable, auditlog.ReasonUnreachable,
		auditlog.ReasonDestination, auditlog.ReasonImplicit, auditlog.ReasonOverride,
		auditlog.ReasonCrawlDelay, auditlog.ReasonBackoff, auditlog.ReasonHostConcurrency, auditlog.ReasonUsage,
		auditlog.ReasonLicense, auditlog.ReasonLicenseRequired:
		return true
	case auditlog.ReasonIntercept:
		return false
	}
	return l.Decision == "allow"
}

// target returns the scheme and host (with optional port) of the line's
// request: for a CONNECT, its authority and the scheme whose robots.txt
// applies to it (policy.ConnectAuthority), else the url's. ok is false
// when the url names no host.
func (l *auditLine) target() (scheme, hostport string, ok bool) {
	if l.Method == http.MethodConnect {
		scheme, _, err := policy.ConnectAuthority(l.URL)
		return scheme, l.URL, err == nil
	}
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return "", "", false
	}
	return u.Scheme, u.Host, true
}

// path returns the request path the proxy decided: "/" for a CONNECT (a
// host-level decision, see policy.DecideConnect), else the path and query
// of the URL as sent (policy.RequestPath).
func (l *auditLine) path() string {
	if l.Method == http.MethodConnect {
		return "/"
	}
	return policy.RequestPath(l.URL)
}

// checkRobotsURL checks that robots_url is the robots.txt URL of the
// line's url (policy.Authority, policy.RobotsURL): a line cannot borrow
// another authority's robots.txt. A url cut short is not checked.
func (l *auditLine) checkRobotsURL() (Kind, string) {
	if l.URLTruncated {
		return "", ""
	}
	scheme, host, ok := l.target()
	if !ok {
		return KindDecision, fmt.Sprintf("url %q names no authority robots.txt covers", l.URL)
	}
	scheme, authority, err := policy.Authority(scheme, host)
	if err != nil {
		return KindDecision, fmt.Sprintf("url %q names no authority robots.txt covers: %v", l.URL, err)
	}
	if want := policy.RobotsURL(scheme, authority); want != l.RobotsURL {
		return KindDecision, fmt.Sprintf("robots_url %s, but the robots.txt of url %q is %s", l.RobotsURL, l.URL, want)
	}
	return "", ""
}

// checkAccess checks the robots.txt reason of the line (its reason, or
// its robots_reason; "" for any that a successful access gives) against
// its own access_result, before any archive is read: DecideAccess on that
// result alone must give the reason (a successful result: a rule, or no
// matching rule).
func (l *auditLine) checkAccess(reason string) (Kind, string) {
	var want policy.Reason
	switch policy.AccessResult(l.Access) {
	case policy.Successful:
		switch policy.Reason(reason) {
		case "", auditlog.ReasonRule, auditlog.ReasonNoMatch:
			return "", ""
		}
		return KindDecision, fmt.Sprintf("reason %s does not follow from access_result %s (only %s or %s do)", reason, l.Access, auditlog.ReasonRule, auditlog.ReasonNoMatch)
	case policy.Unavailable, policy.Unreachable:
		a := policy.Access{Result: policy.AccessResult(l.Access), Refused: reason == string(auditlog.ReasonDestination)}
		want = policy.DecideAccess(&a, l.path(), l.Candidates).Reason
	default:
		return KindDecision, fmt.Sprintf("reason %s needs an access_result, the line has %q", reason, l.Access)
	}
	if reason != string(want) {
		return KindDecision, fmt.Sprintf("reason %s does not follow from access_result %s (%s does)", reason, l.Access, want)
	}
	return "", ""
}

// outcomeOf returns what the proxy logs of decision d.
func outcomeOf(d policy.Decision) outcome {
	o := outcome{allowed: d.Allowed, reason: string(d.Reason), group: d.Verdict.Agent, fallback: d.Verdict.Fallback}
	if r := d.Rule(); r != nil {
		o.rule, o.ruleLine = r.Text(), r.Line
	}
	return o
}

// outcome is what the proxy logs of a decision: the fields verify compares.
type outcome struct {
	allowed  bool
	reason   string
	group    string
	fallback bool
	rule     string
	ruleLine int
}

func (o outcome) String() string {
	verdict := "deny"
	if o.allowed {
		verdict = "allow"
	}
	s := verdict + " (" + o.reason
	if o.rule != "" {
		s += fmt.Sprintf(", %q at line %d", o.rule, o.ruleLine)
	}
	if o.group != "" {
		s += ", group " + o.group
		if o.fallback {
			s += " (star fallback)"
		}
	}
	return s + ")"
}

// logged returns the outcome the line records.
func (l *auditLine) logged() outcome {
	return outcome{allowed: l.Decision == "allow", reason: l.Reason, group: l.Group, fallback: l.StarFallback,
		rule: l.Rule, ruleLine: l.RuleLine}
}

// same reports whether the logged outcome is o; a rule cut short in the
// log (rule_truncated) need only be o's rule's start.
func (l *auditLine) same(o outcome) bool {
	got := l.logged()
	if l.RuleTruncated && strings.HasPrefix(o.rule, got.rule) {
		got.rule = o.rule
	}
	if l.GroupTruncated && strings.HasPrefix(o.group, got.group) {
		got.group = o.group
	}
	return got == o && (l.Decision == "allow" || l.Decision == "deny")
}
