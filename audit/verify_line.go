package audit

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/robotsproxy/robotsproxy/policy"
)

// auditLine holds the fields of an audit line (see proxy/audit.go) that
// re-deciding it needs; parseLine's value method maps the line's keys
// (method, url, url_truncated, ...) onto them.
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
	// line's reason (a request that waited: reason crawl-delay, backoff
	// or host-concurrency); parseLine moves it into Reason, which is what
	// is re-decided.
	RobotsReason string

	in interner // interns the values read (see parseLine)
}

// Reasons of the decisions robots.txt makes (see policy.Reason).
const (
	reasonRule        = "rule"
	reasonNoMatch     = "no-matching-rule"
	reasonUnavailable = "unavailable"
	reasonUnreachable = "unreachable"
	reasonDestination = "destination-refused"
)

// isDecision reports whether robots.txt decided the line: its reason is
// one that follows from the matcher or the access result.
func (l *auditLine) isDecision() bool {
	switch l.Reason {
	case reasonRule, reasonNoMatch, reasonUnavailable, reasonUnreachable, reasonDestination:
		return true
	}
	return false
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

// checkAccess checks the line's reason against its own access_result,
// before any archive is read: DecideAccess on that result alone must give
// the line's reason (a successful result: a rule, or no matching rule).
func (l *auditLine) checkAccess() (Kind, string) {
	var want string
	switch policy.AccessResult(l.Access) {
	case policy.Successful:
		if l.Reason == reasonRule || l.Reason == reasonNoMatch {
			return "", ""
		}
		return KindDecision, fmt.Sprintf("reason %s does not follow from access_result %s (only %s or %s do)", l.Reason, l.Access, reasonRule, reasonNoMatch)
	case policy.Unavailable, policy.Unreachable:
		a := policy.Access{Result: policy.AccessResult(l.Access), Refused: l.Reason == reasonDestination}
		want = string(policy.DecideAccess(&a, l.path(), l.Candidates).Reason)
	default:
		return KindDecision, fmt.Sprintf("reason %s needs an access_result, the line has %q", l.Reason, l.Access)
	}
	if l.Reason != want {
		return KindDecision, fmt.Sprintf("reason %s does not follow from access_result %s (%s does)", l.Reason, l.Access, want)
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
