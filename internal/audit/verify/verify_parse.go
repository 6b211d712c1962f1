package verify

import (
	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// Why a line is a bad line: auditlog.Scanner's errors.
var (
	errNotObject = auditlog.ErrSyntax
	errTruncated = auditlog.ErrTruncated
	errBadType   = auditlog.ErrType
	errTooDeep   = auditlog.ErrTooDeep
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

// parseLine decodes one line (without its newline) into l, keeping the
// backing array of l.Candidates, through auditlog.Scanner: a line is
// accepted exactly when encoding/json accepts it, and a key that repeats
// counts with its last value (null: the zero value). in interns repeated
// values; nil interns nothing.
func parseLine(b []byte, l *auditLine, in interner) error {
	*l = auditLine{Candidates: l.Candidates[:0], in: in}
	var sc auditlog.Scanner
	sc.Reset(b)
	for sc.Next() {
		if err := l.value(&sc); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return nil
}

// value reads the current member of sc into l, or leaves it to be
// skipped.
func (l *auditLine) value(sc *auditlog.Scanner) error {
	var s *string
	var flag *bool
	switch string(sc.Key()) {
	case auditlog.FieldMethod:
		s = &l.Method
	case auditlog.FieldURL:
		s = &l.URL
	case auditlog.FieldDecision:
		s = &l.Decision
	case auditlog.FieldReason:
		s = &l.Reason
	case auditlog.FieldRobotsURL:
		s = &l.RobotsURL
	case auditlog.FieldGroup:
		s = &l.Group
	case auditlog.FieldRule:
		s = &l.Rule
	case auditlog.FieldAccess:
		s = &l.Access
	case auditlog.FieldRobotsSHA256:
		s = &l.RobotsSHA256
	case auditlog.FieldRobotsFetchedAt:
		s = &l.RobotsFetchedAt
	case auditlog.FieldRobotsReason:
		s = &l.RobotsReason
	case auditlog.FieldUsageRefused:
		s = &l.UsageRefused
	case auditlog.FieldLicenseURL:
		s = &l.LicenseURL
	case auditlog.FieldLicenseSHA256:
		s = &l.LicenseSHA256
	case auditlog.FieldLicenseDecision:
		s = &l.LicenseDecision
	case auditlog.FieldLicenseRefused:
		s = &l.LicenseRefused
	case auditlog.FieldLicenseSource:
		s = &l.LicenseSource
	case auditlog.FieldURL + auditlog.TruncatedSuffix:
		flag = &l.URLTruncated
	case auditlog.FieldCandidates + auditlog.TruncatedSuffix:
		flag = &l.CandidatesTruncated
	case auditlog.FieldRobotsURL + auditlog.TruncatedSuffix:
		flag = &l.RobotsURLTruncated
	case auditlog.FieldGroup + auditlog.TruncatedSuffix:
		flag = &l.GroupTruncated
	case auditlog.FieldRule + auditlog.TruncatedSuffix:
		flag = &l.RuleTruncated
	case auditlog.FieldFallback:
		flag = &l.StarFallback
	case auditlog.FieldCandidates:
		return l.strings(&l.Candidates, sc)
	case auditlog.FieldPurposes:
		return l.strings(&l.Purposes, sc)
	case auditlog.FieldSignatureKeyID:
		s = &l.SignatureKeyID
	case auditlog.FieldSignatureCreated:
		if sc.Null() {
			l.SignatureCreated, l.HasCreated = 0, false
			return nil
		}
		v, err := sc.Int()
		l.SignatureCreated, l.HasCreated = v, err == nil
		return err
	case auditlog.FieldRuleLine:
		n, null, err := intValue(sc)
		if null || err != nil {
			l.RuleLine = 0
			return err
		}
		l.RuleLine = n
		return nil
	case auditlog.FieldRobotsStatus:
		n, null, err := intValue(sc)
		if null || err != nil {
			l.RobotsStatus = nil
			return err
		}
		l.RobotsStatus = &n
		return nil
	default:
		return nil // skipped by sc.Next
	}
	if sc.Null() {
		if s != nil {
			*s = ""
		} else {
			*flag = false
		}
		return nil
	}
	if s != nil {
		v, err := sc.Str()
		if err != nil {
			return err
		}
		if s == &l.URL {
			*s = string(v) // a different URL on most lines
		} else {
			*s = l.in.String(v)
		}
		return nil
	}
	v, err := sc.Bool()
	*flag = v
	return err
}

// strings reads the current member of sc, an array of strings or null,
// onto (*dst)[:0].
func (l *auditLine) strings(dst *[]string, sc *auditlog.Scanner) error {
	*dst = (*dst)[:0]
	if sc.Null() {
		return nil
	}
	var scratch [auditlog.MaxListEntries][]byte
	list, err := sc.Strs(scratch[:0])
	if err != nil {
		return err
	}
	for _, c := range list {
		*dst = append(*dst, l.in.String(c))
	}
	return nil
}

// intValue reads the current member of sc, an integer that fits an int,
// or null.
func intValue(sc *auditlog.Scanner) (n int, null bool, err error) {
	if sc.Null() {
		return 0, true, nil
	}
	v, err := sc.Int()
	if err != nil {
		return 0, false, err
	}
	if int64(int(v)) != v {
		return 0, false, auditlog.ErrType
	}
	return int(v), false, nil
}
