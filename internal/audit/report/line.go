package report

import (
	"bytes"
	"errors"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// record is the part of one audit line the report reads: auditlog's
// projection of it (auditlog.Line, its fields as recordFields names them).
// Its byte slices alias the line's buffer (or a buffer of their own when a
// string had escapes) and are valid until the next line is read.
type record struct {
	auditlog.Line
}

// recordFields are the fields the report reads; the others are skipped
// unread.
var recordFields = auditlog.Want(0).Of(auditlog.FieldTime, auditlog.FieldEnforced, auditlog.FieldRuleLine,
	auditlog.FieldURL, auditlog.FieldDecision, auditlog.FieldReason, auditlog.FieldRobotsReason,
	auditlog.FieldToken, auditlog.FieldTokenSource, auditlog.FieldRobotsURL, auditlog.FieldRule,
	auditlog.FieldAccess, auditlog.FieldRobotsSHA256, auditlog.FieldUser, auditlog.FieldPrice,
	auditlog.FieldCharged, auditlog.FieldCurrency, auditlog.FieldNotPaid, auditlog.FieldGroup, auditlog.FieldFallback,
	auditlog.FieldCandidates, auditlog.TruncatedSuffix)

// Why a line was skipped besides auditlog's errors (auditlog.ErrSyntax,
// ErrTruncated, ErrType, ErrTooLong, ErrBadTime): it is not a request's
// line.
var (
	errNoDecision = errors.New("no decision field")
	errNoTime     = errors.New("no time field")
)

// parseRecord reads the fields the report needs from one JSON object
// through auditlog.Project: a line is accepted exactly when encoding/json
// accepts it, and a key that repeats counts with its last value (null:
// the zero value, or absent for time and decision).
func parseRecord(b []byte, r *record) error {
	if err := auditlog.Project(b, &r.Line, recordFields); err != nil {
		return err
	}
	switch {
	case !r.HasTime:
		return errNoTime
	case !r.HasDecision:
		return errNoDecision
	}
	r.credit()
	return nil
}

// credit sets Token to the crawler the line is credited to: its
// product_token, unless that came from the User-Agent's products and the
// group that decided names another of its candidates, the crawler the site
// names ("SAMSUNG-SGH-E250/1.0 ... (compatible; Googlebot-Mobile/2.1;
// ...)" decided by a Googlebot-Mobile group is Googlebot-Mobile), as audit
// access-log credits a finding. A token the crawler catalogue gave
// (token_source "catalogue") is the crawler already.
func (r *record) credit() {
	if string(r.TokenSource) != string(policy.SourceUserAgent) || r.StarFallback || len(r.Group) == 0 || bytes.EqualFold(r.Group, r.Token) {
		return
	}
	for _, c := range r.Candidates {
		if bytes.EqualFold(c, r.Group) {
			r.Token = c
			return
		}
	}
}
