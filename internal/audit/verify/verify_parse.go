package verify

import (
	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// interner returns one string for each distinct value: most fields of a
// log repeat (decision, reason, robots_url, robots_sha256, ...), so
// reading them allocates only the first time. Bounded by maxInterned
// values of at most maxInternedLen octets each; a longer value (a long
// url, once per line anyway) is not kept. The nil interner interns
// nothing.
type interner = *memo.Interner

const (
	maxInterned    = 1 << 14
	maxInternedLen = 4 << 10
)

// newInterner returns an empty interner.
func newInterner() interner { return memo.NewInterner(maxInterned, maxInternedLen) }

// lineFields are the fields of an audit line that re-deciding it needs
// (see auditLine); the others are skipped unread.
var lineFields = auditlog.Want(0).Of(auditlog.FieldMethod, auditlog.FieldURL, auditlog.FieldDecision,
	auditlog.FieldReason, auditlog.FieldRobotsURL, auditlog.FieldGroup, auditlog.FieldRule, auditlog.FieldAccess,
	auditlog.FieldRobotsSHA256, auditlog.FieldRobotsFetchedAt, auditlog.FieldRobotsReason, auditlog.FieldUsageRefused,
	auditlog.FieldLicenseURL, auditlog.FieldLicenseSHA256, auditlog.FieldLicenseDecision, auditlog.FieldLicenseRefused,
	auditlog.FieldLicenseSource, auditlog.FieldURL+auditlog.TruncatedSuffix,
	auditlog.FieldCandidates+auditlog.TruncatedSuffix, auditlog.FieldRobotsURL+auditlog.TruncatedSuffix,
	auditlog.FieldGroup+auditlog.TruncatedSuffix, auditlog.FieldRule+auditlog.TruncatedSuffix, auditlog.FieldFallback,
	auditlog.FieldCandidates, auditlog.FieldPurposes, auditlog.FieldSignatureKeyID, auditlog.FieldSignatureCreated,
	auditlog.FieldRuleLine, auditlog.FieldRobotsStatus)

// parseLine decodes one line (without its newline) into l, keeping the
// backing array of l.Candidates, through auditlog.Project: a line is
// accepted exactly when encoding/json accepts it, and a key that repeats
// counts with its last value (null: the zero value). The error is
// auditlog's (ErrSyntax, ErrTruncated, ErrType, ErrTooDeep). in interns
// repeated values; nil interns nothing.
func parseLine(b []byte, l *auditLine, in interner) error {
	src := l.src
	if src == nil {
		src = new(auditlog.Line)
	}
	*l = auditLine{Candidates: l.Candidates[:0], in: in, src: src}
	if err := auditlog.Project(b, src, lineFields); err != nil {
		return err
	}
	l.from(src)
	return nil
}

// from copies the projection p into l, interning its strings but the url
// (a different one on most lines).
func (l *auditLine) from(p *auditlog.Line) {
	l.Method, l.URL, l.Decision, l.Reason = l.str(p.Method), string(p.URL), l.str(p.Decision), l.str(p.Reason)
	l.RobotsURL, l.Group, l.Rule, l.Access = l.str(p.RobotsURL), l.str(p.Group), l.str(p.Rule), l.str(p.Access)
	l.RobotsSHA256, l.RobotsFetchedAt, l.RobotsReason = l.str(p.RobotsSHA256), l.str(p.RobotsFetchedAt), l.str(p.RobotsReason)
	l.UsageRefused, l.LicenseURL, l.LicenseSHA256 = l.str(p.UsageRefused), l.str(p.LicenseURL), l.str(p.LicenseSHA256)
	l.LicenseDecision, l.LicenseRefused, l.LicenseSource = l.str(p.LicenseDecision), l.str(p.LicenseRefused), l.str(p.LicenseSource)
	l.SignatureKeyID, l.SignatureCreated, l.HasCreated = l.str(p.SignatureKeyID), p.SignatureCreated, p.HasCreated
	l.URLTruncated, l.CandidatesTruncated, l.RobotsURLTruncated = p.URLTruncated, p.CandidatesTruncated, p.RobotsURLTruncated
	l.GroupTruncated, l.RuleTruncated, l.StarFallback = p.GroupTruncated, p.RuleTruncated, p.StarFallback
	l.RuleLine = int(p.RuleLine)
	if p.HasRobotsStatus {
		n := int(p.RobotsStatus)
		l.RobotsStatus = &n
	}
	for _, c := range p.Candidates {
		l.Candidates = append(l.Candidates, l.str(c))
	}
	for _, c := range p.Purposes {
		l.Purposes = append(l.Purposes, l.str(c))
	}
}

// str returns b as a string, interned.
func (l *auditLine) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return l.in.String(b)
}
