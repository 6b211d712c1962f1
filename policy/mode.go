package policy

import "github.com/robotsproxy/robotsproxy/internal/identity"

// Mode says how a robots.txt denial is acted on; it is identity.Mode, the
// mode a pinned identity carries.
type Mode = identity.Mode

const (
	// ModeEnforce is identity.ModeEnforce: a denied request gets 403.
	ModeEnforce = identity.ModeEnforce
	// ModeReport is identity.ModeReport: a denied request is forwarded and
	// the denial only recorded.
	ModeReport = identity.ModeReport
)

// ParseMode is identity.ParseMode: "enforce", "report" or "" (the
// default).
func ParseMode(s string) (Mode, error) { return identity.ParseMode(s) }

// reportable reports whether a denial for reason may go unenforced in
// report mode: the denials robots.txt makes (a disallow rule, or an
// unreachable robots.txt, RFC 9309 2.2.2 and 2.3.1.4, or a usage
// preference, or an RSL license), never the operator's own destination
// policy or authentication.
func reportable(r Reason) bool {
	return r == ReasonRule || r == ReasonUnreachable || r == ReasonUsage ||
		r == ReasonLicense || r == ReasonLicenseRequired
}
