package proxy

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestFragmentsKeepTheLine checks that a line whose identity and evidence
// fields come from a kept fragment is the line rendered field by field,
// octet for octet, and that decisions differing in any of those fields
// never share a fragment.
func TestFragmentsKeepTheLine(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	base := func() policy.Decision {
		var d policy.Decision
		d.Identity.Token, d.Identity.Source, d.Identity.Candidates = "ExampleBot", "user-agent", []string{"ExampleBot"}
		d.RobotsURL = "http://example.com/robots.txt"
		d.Verdict.Agent = "examplebot"
		d.RobotsSHA256, d.RobotsFetchedAt = sha256.Sum256([]byte("x")), at
		return d
	}
	tests := []struct {
		name string
		edit func(*policy.Decision)
	}{
		{"plain", func(*policy.Decision) {}},
		{"no candidates", func(d *policy.Decision) { d.Identity.Candidates = nil }},
		{"one empty candidate", func(d *policy.Decision) { d.Identity.Candidates = []string{""} }},
		{"two candidates", func(d *policy.Decision) { d.Identity.Candidates = []string{"ExampleBot", "OtherBot"} }},
		{"pinned user", func(d *policy.Decision) { d.Identity.User = "alice" }},
		{"other source", func(d *policy.Decision) { d.Identity.Source = "pinned" }},
		{"no group", func(d *policy.Decision) { d.Verdict.Agent = "" }},
		{"star fallback", func(d *policy.Decision) { d.Verdict.Agent, d.Verdict.Fallback = "*", true }},
		{"escaped robots URL", func(d *policy.Decision) { d.RobotsURL = "http://example.com/robots.txt?\"\x01\xff" }},
		{"cut group", func(d *policy.Decision) { d.Verdict.Agent = strings.Repeat("g", 300) }},
		{"long robots URL", func(d *policy.Decision) { d.RobotsURL = "http://example.com/" + strings.Repeat("r", 2000) }},
		{"other robots.txt", func(d *policy.Decision) { d.RobotsSHA256 = sha256.Sum256([]byte("y")) }},
		{"fetched later", func(d *policy.Decision) { d.RobotsFetchedAt = at.Add(time.Nanosecond) }},
		{"no fetch time", func(d *policy.Decision) { d.RobotsFetchedAt = time.Time{} }},
		{"no SHA-256", func(d *policy.Decision) { d.RobotsSHA256 = [32]byte{} }},
	}
	f := fieldWriter{max: 256}
	line := func(fields func(e *zerolog.Event) *zerolog.Event) string {
		var buf bytes.Buffer
		l := zerolog.New(&buf)
		fields(l.Log().Str(auditlog.FieldReason, "r")).Int(auditlog.FieldStatus, 200).Send()
		return buf.String()
	}
	p := New(Options{Policy: policy.New(policy.Options{})})
	for round := range 2 { // the first renders and keeps, the second takes kept fragments
		for _, tt := range tests {
			d := base()
			tt.edit(&d)
			want := line(func(e *zerolog.Event) *zerolog.Event {
				return evidenceFieldsOf(whoFieldsOf(f, e, &d), d.RobotsSHA256, d.RobotsFetchedAt)
			})
			got := line(func(e *zerolog.Event) *zerolog.Event { return p.evidenceFields(p.whoFields(f, e, &d), &d) })
			if got != want {
				t.Errorf("round %d, %s:\n got %s\nwant %s", round+1, tt.name, got, want)
			}
		}
	}
	// 15 decisions, of which 5 differ only in evidence, and none kept for
	// two candidates, a pinned user or a robots URL longer than a fragment.
	if n := p.frags.who.Len(); n != 8 {
		t.Errorf("%d identity fragments kept; want 8", n)
	}
	if n := p.frags.evidence.Len(); n != 3 {
		t.Errorf("%d evidence fragments kept; want 3 (none without both SHA-256 and fetch time)", n)
	}
}
