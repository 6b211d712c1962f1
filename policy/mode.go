package policy

import (
	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Mode says how a robots.txt denial is acted on: the value of the
// configuration's mode, identity.users[].mode and
// identity.client_ranges[].mode.
type Mode string

const (
	// ModeEnforce: a request that robots.txt disallows is answered 403
	// before it reaches the origin. The default.
	ModeEnforce Mode = Mode(rules.ModeEnforce)
	// ModeReport: a request that robots.txt disallows is forwarded and
	// the denial only recorded (Decision.ReportOnly). Destination policy,
	// private ranges and proxy authentication stay enforced.
	ModeReport Mode = Mode(rules.ModeReport)
)

// ParseMode parses "enforce", "report" or "" (the default, "") as the
// configuration does; the error names the value.
func ParseMode(s string) (Mode, error) {
	m, err := rules.ParseMode(s)
	return Mode(m), err
}

// reportable reports whether a denial for reason may go unenforced in
// report mode: the denials robots.txt makes (a disallow rule, or an
// unreachable robots.txt, RFC 9309 2.2.2 and 2.3.1.4, or a usage
// preference, or an RSL license), never the operator's own destination
// policy or authentication.
func reportable(r Reason) bool {
	return r == auditlog.ReasonRule || r == auditlog.ReasonUnreachable || r == auditlog.ReasonUsage ||
		r == auditlog.ReasonLicense || r == auditlog.ReasonLicenseRequired
}
