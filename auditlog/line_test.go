package auditlog

import (
	"errors"
	"testing"
)

// TestProject: Project reads the fields wanted, each one way, and skips
// the others unread, so that a reader is not refused a line for a field
// it never reads.
func TestProject(t *testing.T) {
	all := Want(0).Of(FieldTime, FieldDecision, FieldReason, FieldRobotsReason, FieldEnforced, FieldRuleLine,
		FieldRobotsStatus, FieldCandidates, FieldURL+TruncatedSuffix, TruncatedSuffix)
	for _, tt := range []struct {
		name, in string
		want     Want
		err      error
		check    func(l *Line) bool
	}{
		{"robots_reason is robots.txt's", `{"reason":"backoff","robots_reason":"rule"}`, all, nil,
			func(l *Line) bool {
				return string(l.RobotsTxtReason()) == ReasonRule && string(l.Reason) == ReasonBackoff
			}},
		{"else reason", `{"reason":"rule"}`, all, nil, func(l *Line) bool { return string(l.RobotsTxtReason()) == ReasonRule }},
		{"enforced when absent", `{}`, all, nil, func(l *Line) bool { return l.Enforced && !l.HasTime && !l.HasDecision }},
		{"enforced when null", `{"enforced":null}`, all, nil, func(l *Line) bool { return l.Enforced }},
		{"not enforced", `{"enforced":false}`, all, nil, func(l *Line) bool { return !l.Enforced }},
		{"time", `{"time":"2026-11-22T21:10:50+01:00"}`, all, nil, func(l *Line) bool { return l.HasTime && l.Time == 1795378250 }},
		{"bad time", `{"time":"yesterday"}`, all, ErrBadTime, nil},
		{"bad time, not read", `{"time":"yesterday"}`, Want(0).Of(FieldReason), nil, func(l *Line) bool { return !l.HasTime }},
		{"decision null", `{"decision":"allow","decision":null}`, all, nil, func(l *Line) bool { return !l.HasDecision && l.Decision == nil }},
		{"wrong type, read", `{"reason":1}`, all, ErrType, nil},
		{"wrong type, not read", `{"user":1}`, all, nil, func(l *Line) bool { return l.User == nil }},
		{"known flag", `{"url_truncated":true}`, all, nil, func(l *Line) bool { return l.URLTruncated && l.Cut }},
		{"other flag", `{"user_agent_truncated":true}`, all, nil, func(l *Line) bool { return l.Cut }},
		{"other flag, not read", `{"user_agent_truncated":"x"}`, Want(0).Of(FieldURL + TruncatedSuffix), nil, func(l *Line) bool { return !l.Cut }},
		{"other flag, wrong type", `{"user_agent_truncated":"x"}`, all, ErrType, nil},
		{"rule_line null", `{"rule_line":null}`, all, nil, func(l *Line) bool { return l.RuleLine == 0 }},
		{"robots_status", `{"robots_status":503}`, all, nil, func(l *Line) bool { return l.HasRobotsStatus && l.RobotsStatus == 503 }},
		{"robots_status null", `{"robots_status":null}`, all, nil, func(l *Line) bool { return !l.HasRobotsStatus }},
		{"candidates", `{"candidates":["a","b\u0041"]}`, all, nil, func(l *Line) bool {
			return len(l.Candidates) == 2 && string(l.Candidates[1]) == "bA"
		}},
		{"not an object", `[1]`, all, ErrSyntax, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l Line
			err := Project([]byte(tt.in), &l, tt.want)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Project(%s): got error %v, want %v", tt.in, err, tt.err)
			}
			if tt.check != nil && !tt.check(&l) {
				t.Errorf("Project(%s): got %+v", tt.in, l)
			}
		})
	}
}

// TestProjectReuses: a Line projected again keeps nothing of the line
// before.
func TestProjectReuses(t *testing.T) {
	var l Line
	w := Want(0).Of(FieldReason, FieldCandidates, FieldEnforced, TruncatedSuffix)
	if err := Project([]byte(`{"reason":"rule","candidates":["a"],"enforced":false,"x_truncated":true}`), &l, w); err != nil {
		t.Fatal(err)
	}
	if err := Project([]byte(`{}`), &l, w); err != nil {
		t.Fatal(err)
	}
	if l.Reason != nil || len(l.Candidates) != 0 || !l.Enforced || l.Cut {
		t.Errorf("got %+v, want the zero projection", l)
	}
}
