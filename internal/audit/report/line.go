package report

import (
	"errors"

	"github.com/robotsproxy/robotsproxy/auditlog"
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
	auditlog.FieldCharged, auditlog.FieldCurrency, auditlog.FieldNotPaid, auditlog.TruncatedSuffix)

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
	return nil
}
