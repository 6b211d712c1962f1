package audit

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/robotsproxy/robotsproxy/robots"
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

// path returns the request path the proxy decided (see proxy's
// requestPath): "/" for a CONNECT (a host-level decision), else the
// path and query of the URL as sent, "#" read as "%23".
func (l *auditLine) path() string {
	if l.Method == http.MethodConnect {
		return "/"
	}
	u := strings.ReplaceAll(l.URL, "#", "%23")
	if strings.HasPrefix(u, "/") {
		return u
	}
	return robots.PathOf(u)
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
