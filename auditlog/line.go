package auditlog

import (
	"bytes"
	"errors"
)

// ErrBadTime: the line's FieldTime is a string that is not an RFC 3339
// time.
var ErrBadTime = errors.New("time is not RFC 3339")

// Line is the projection of one audit line that its readers (audit
// verify, audit report) share: the fields they read, each read the one
// way this package defines. Project fills it.
//
// A string field is nil when the line lacks it or has null there (the
// zero value, as encoding/json gives). Its octets alias the line read or
// the Line's own buffer (a string with escapes) and are valid until the
// next Project into the same Line: a reader that keeps a value copies it.
// When a key repeats, its last member counts.
type Line struct {
	Method, URL, Decision, Reason, RobotsReason []byte
	Token, TokenSource, User                    []byte
	RobotsURL, Group, Rule, Access              []byte
	RobotsSHA256, RobotsFetchedAt               []byte
	UsageRefused                                []byte
	LicenseURL, LicenseSHA256, LicenseDecision  []byte
	LicenseRefused, LicenseSource               []byte
	SignatureKeyID                              []byte
	Price, Charged, Currency, NotPaid           []byte
	// Candidates and Purposes are the list fields; Project reuses their
	// backing arrays.
	Candidates, Purposes [][]byte

	// Time is FieldTime in seconds since the Unix epoch; HasTime is false
	// when the line has no time, or null.
	Time    int64
	HasTime bool
	// HasDecision is false when the line has no decision, or null.
	HasDecision bool
	// Enforced is FieldEnforced: true when absent or null (lines written
	// before report mode).
	Enforced bool
	// StarFallback is FieldFallback.
	StarFallback bool
	// RuleLine is FieldRuleLine, 0 when absent or null.
	RuleLine int64
	// RobotsStatus is FieldRobotsStatus when HasRobotsStatus.
	RobotsStatus    int64
	HasRobotsStatus bool
	// SignatureCreated is FieldSignatureCreated (seconds since the Unix
	// epoch) when HasCreated.
	SignatureCreated int64
	HasCreated       bool
	// URLTruncated ... RuleTruncated are the FIELD_truncated flags of the
	// bounded fields a decision is checked by.
	URLTruncated, CandidatesTruncated, RobotsURLTruncated, GroupTruncated, RuleTruncated bool
	// Cut is true when some FIELD_truncated read is true: a field was cut
	// short by the writer (see TruncatedSuffix).
	Cut bool

	sc Scanner
}

// RobotsTxtReason is robots.txt's reason for the line's decision: its
// FieldRobotsReason when it has one (a request that politeness held is
// logged with the wait's cause, crawl-delay, backoff or host-concurrency,
// as its FieldReason), else its FieldReason.
func (l *Line) RobotsTxtReason() []byte {
	if len(l.RobotsReason) > 0 {
		return l.RobotsReason
	}
	return l.Reason
}

// Want is a set of fields for Project to read: see Want.Of.
type Want uint64

// Of returns w and the fields named: Field constants, a bounded field's
// flag as FIELD + TruncatedSuffix, and TruncatedSuffix alone for every
// FIELD_truncated a line has. A name Line does not project is left out.
func (w Want) Of(names ...string) Want {
	for _, n := range names {
		if n == TruncatedSuffix {
			w |= 1 << anyTruncated
			continue
		}
		if f := fieldOf([]byte(n)); f != noField {
			w |= 1 << f
		}
	}
	return w
}

func (w Want) has(f field) bool { return w&(1<<f) != 0 }

// Project reads line (one audit line, without its newline) into l through
// a Scanner, reading the fields in want and skipping the others (they are
// validated as JSON, not typed): a line is accepted exactly when
// encoding/json accepts it and every field read has its type. The error
// is one of the Scanner's (ErrSyntax, ErrTruncated, ErrType, ErrTooDeep,
// ErrTooLong) or ErrBadTime, from the first member that fails.
func Project(line []byte, l *Line, want Want) error {
	*l = Line{Candidates: l.Candidates[:0], Purposes: l.Purposes[:0], Enforced: true, sc: l.sc}
	sc := &l.sc
	sc.Reset(line)
	for sc.Next() {
		if err := l.value(sc, want); err != nil {
			return err
		}
	}
	return sc.Err()
}

// field names a member Line projects.
type field uint8

const (
	noField field = iota
	fMethod
	fURL
	fDecision
	fReason
	fRobotsReason
	fToken
	fTokenSource
	fUser
	fRobotsURL
	fGroup
	fRule
	fAccess
	fRobotsSHA256
	fRobotsFetchedAt
	fUsageRefused
	fLicenseURL
	fLicenseSHA256
	fLicenseDecision
	fLicenseRefused
	fLicenseSource
	fSignatureKeyID
	fPrice
	fCharged
	fCurrency
	fNotPaid
	fCandidates
	fPurposes
	fTime
	fEnforced
	fFallback
	fRuleLine
	fRobotsStatus
	fSignatureCreated
	fURLTruncated
	fCandidatesTruncated
	fRobotsURLTruncated
	fGroupTruncated
	fRuleTruncated
	anyTruncated // any other FIELD_truncated
)

// fieldOf returns the field key names, noField for one Line does not
// project.
func fieldOf(key []byte) field {
	switch string(key) {
	case FieldMethod:
		return fMethod
	case FieldURL:
		return fURL
	case FieldDecision:
		return fDecision
	case FieldReason:
		return fReason
	case FieldRobotsReason:
		return fRobotsReason
	case FieldToken:
		return fToken
	case FieldTokenSource:
		return fTokenSource
	case FieldUser:
		return fUser
	case FieldRobotsURL:
		return fRobotsURL
	case FieldGroup:
		return fGroup
	case FieldRule:
		return fRule
	case FieldAccess:
		return fAccess
	case FieldRobotsSHA256:
		return fRobotsSHA256
	case FieldRobotsFetchedAt:
		return fRobotsFetchedAt
	case FieldUsageRefused:
		return fUsageRefused
	case FieldLicenseURL:
		return fLicenseURL
	case FieldLicenseSHA256:
		return fLicenseSHA256
	case FieldLicenseDecision:
		return fLicenseDecision
	case FieldLicenseRefused:
		return fLicenseRefused
	case FieldLicenseSource:
		return fLicenseSource
	case FieldSignatureKeyID:
		return fSignatureKeyID
	case FieldPrice:
		return fPrice
	case FieldCharged:
		return fCharged
	case FieldCurrency:
		return fCurrency
	case FieldNotPaid:
		return fNotPaid
	case FieldCandidates:
		return fCandidates
	case FieldPurposes:
		return fPurposes
	case FieldTime:
		return fTime
	case FieldEnforced:
		return fEnforced
	case FieldFallback:
		return fFallback
	case FieldRuleLine:
		return fRuleLine
	case FieldRobotsStatus:
		return fRobotsStatus
	case FieldSignatureCreated:
		return fSignatureCreated
	case FieldURL + TruncatedSuffix:
		return fURLTruncated
	case FieldCandidates + TruncatedSuffix:
		return fCandidatesTruncated
	case FieldRobotsURL + TruncatedSuffix:
		return fRobotsURLTruncated
	case FieldGroup + TruncatedSuffix:
		return fGroupTruncated
	case FieldRule + TruncatedSuffix:
		return fRuleTruncated
	}
	if bytes.HasSuffix(key, []byte(TruncatedSuffix)) {
		return anyTruncated
	}
	return noField
}

// str returns the string field f of l, nil when f is not one.
func (l *Line) str(f field) *[]byte {
	switch f {
	case fMethod:
		return &l.Method
	case fURL:
		return &l.URL
	case fDecision:
		return &l.Decision
	case fReason:
		return &l.Reason
	case fRobotsReason:
		return &l.RobotsReason
	case fToken:
		return &l.Token
	case fTokenSource:
		return &l.TokenSource
	case fUser:
		return &l.User
	case fRobotsURL:
		return &l.RobotsURL
	case fGroup:
		return &l.Group
	case fRule:
		return &l.Rule
	case fAccess:
		return &l.Access
	case fRobotsSHA256:
		return &l.RobotsSHA256
	case fRobotsFetchedAt:
		return &l.RobotsFetchedAt
	case fUsageRefused:
		return &l.UsageRefused
	case fLicenseURL:
		return &l.LicenseURL
	case fLicenseSHA256:
		return &l.LicenseSHA256
	case fLicenseDecision:
		return &l.LicenseDecision
	case fLicenseRefused:
		return &l.LicenseRefused
	case fLicenseSource:
		return &l.LicenseSource
	case fSignatureKeyID:
		return &l.SignatureKeyID
	case fPrice:
		return &l.Price
	case fCharged:
		return &l.Charged
	case fCurrency:
		return &l.Currency
	case fNotPaid:
		return &l.NotPaid
	}
	return nil
}

// flag returns the FIELD_truncated flag f of l, nil when f is not one.
func (l *Line) flag(f field) *bool {
	switch f {
	case fURLTruncated:
		return &l.URLTruncated
	case fCandidatesTruncated:
		return &l.CandidatesTruncated
	case fRobotsURLTruncated:
		return &l.RobotsURLTruncated
	case fGroupTruncated:
		return &l.GroupTruncated
	case fRuleTruncated:
		return &l.RuleTruncated
	}
	return nil
}

// value reads the current member of sc into l when want has it, or
// leaves it to be skipped.
func (l *Line) value(sc *Scanner, want Want) error {
	f := fieldOf(sc.Key())
	if f == noField || !want.has(f) && !(f >= fURLTruncated && want.has(anyTruncated)) {
		return nil // skipped by sc.Next
	}
	if s := l.str(f); s != nil {
		*s = nil
		if f == fDecision {
			l.HasDecision = false
		}
		if sc.Null() {
			return nil
		}
		v, err := sc.Str()
		if err != nil {
			return err
		}
		*s = v
		l.HasDecision = l.HasDecision || f == fDecision
		return nil
	}
	if p := l.flag(f); p != nil || f == anyTruncated {
		if sc.Null() {
			if p != nil {
				*p = false
			}
			return nil
		}
		v, err := sc.Bool()
		if p != nil {
			*p = v
		}
		l.Cut = l.Cut || v
		return err
	}
	return l.other(sc, f)
}

// other reads the members that are neither strings nor flags.
func (l *Line) other(sc *Scanner, f field) error {
	var err error
	switch f {
	case fCandidates:
		l.Candidates, err = strs(sc, l.Candidates)
	case fPurposes:
		l.Purposes, err = strs(sc, l.Purposes)
	case fTime:
		l.HasTime = false
		if sc.Null() {
			return nil
		}
		v, err := sc.Str()
		if err != nil {
			return err
		}
		ts, ok := ParseTime(v)
		if !ok {
			return ErrBadTime
		}
		l.Time, l.HasTime = ts, true
	case fEnforced:
		l.Enforced = true // absent or null: enforced
		if !sc.Null() {
			l.Enforced, err = sc.Bool()
		}
	case fFallback:
		l.StarFallback = false
		if !sc.Null() {
			l.StarFallback, err = sc.Bool()
		}
	case fRuleLine:
		l.RuleLine, _, err = intValue(sc)
	case fRobotsStatus:
		var null bool
		l.RobotsStatus, null, err = intValue(sc)
		l.HasRobotsStatus = !null && err == nil
	case fSignatureCreated:
		if sc.Null() {
			l.SignatureCreated, l.HasCreated = 0, false
			return nil
		}
		l.SignatureCreated, err = sc.Int()
		l.HasCreated = err == nil
	}
	return err
}

// strs reads the current member of sc, an array of strings or null,
// onto dst[:0].
func strs(sc *Scanner, dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	if sc.Null() {
		return dst, nil
	}
	return sc.Strs(dst)
}

// intValue reads the current member of sc, an integer that fits an int,
// or null (0).
func intValue(sc *Scanner) (n int64, null bool, err error) {
	if sc.Null() {
		return 0, true, nil
	}
	v, err := sc.Int()
	if err != nil {
		return 0, false, err
	}
	if int64(int(v)) != v {
		return 0, false, ErrType
	}
	return v, false, nil
}
