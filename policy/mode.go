package policy

import (
	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Mode says how a robots.txt denial is acted on; it is rules.Mode, the
// mode a pinned identity carries (identity.Mode).
type Mode = rules.Mode

const (
	// ModeEnforce is rules.ModeEnforce: a denied request gets 403.
	ModeEnforce = rules.ModeEnforce
	// ModeReport is rules.ModeReport: a denied request is forwarded and
	// the denial only recorded.
	ModeReport = rules.ModeReport
)

// ParseMode is rules.ParseMode: "enforce", "report" or "" (the
// default).
func ParseMode(s string) (Mode, error) { return rules.ParseMode(s) }

// reportable reports whether a denial for reason may go unenforced in
// report mode: the denials robots.txt makes (a disallow rule, or an
// unreachable robots.txt, RFC 9309 2.2.2 and 2.3.1.4, or a usage
// preference, or an RSL license), never the operator's own destination
// policy or authentication.
func reportable(r Reason) bool {
	return r == auditlog.ReasonRule || r == auditlog.ReasonUnreachable || r == auditlog.ReasonUsage ||
		r == auditlog.ReasonLicense || r == auditlog.ReasonLicenseRequired
}
