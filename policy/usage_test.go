package policy_test

import (
	"context"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestDecideUsageStep: Decide runs the usage step on the purposes
// declared for the crawler (denying with usage.enforce, recording
// otherwise, the mode applied after), a CONNECT's host-level decision
// does not, and a request inside a tunnel that names another authority
// is refused before robots.txt is fetched.
func TestDecideUsageStep(t *testing.T) {
	const body = "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n"
	decl := policy.NewDeclarations(map[string][]string{"TrainBot": {policy.PurposeTrainAI}})
	tests := []struct {
		name        string
		enforce     bool
		mode        policy.Mode
		ua          string
		wantAllowed bool
		wantReport  bool
		wantReason  policy.Reason
		wantRefused string
	}{
		{"refused, enforced", true, "", "TrainBot/1.0", false, false, auditlog.ReasonUsage, policy.PurposeTrainAI},
		{"refused, report mode", true, policy.ModeReport, "TrainBot/1.0", false, true, auditlog.ReasonUsage, policy.PurposeTrainAI},
		{"refused, recorded only", false, "", "TrainBot/1.0", true, false, auditlog.ReasonRule, policy.PurposeTrainAI},
		{"nothing declared", true, "", "OtherBot/1.0", true, false, auditlog.ReasonRule, ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newStubPolicy(body, policy.Options{Mode: tt.mode, Usage: policy.UsageOptions{Enforce: tt.enforce, Declarations: decl}})
			d := p.Decide(ctx, policy.Request{Scheme: "http", Host: "example.com", Path: "/x", UserAgent: tt.ua})
			refused := ""
			if d.Usage != nil {
				refused = d.Usage.Refused
			}
			if d.Allowed != tt.wantAllowed || d.ReportOnly != tt.wantReport || d.Reason != tt.wantReason || refused != tt.wantRefused {
				t.Errorf("Decide: got allowed %v report-only %v reason %s refused %q, want %v %v %s %q",
					d.Allowed, d.ReportOnly, d.Reason, refused, tt.wantAllowed, tt.wantReport, tt.wantReason, tt.wantRefused)
			}
			c := p.DecideConnect(ctx, policy.Request{Host: "example.com:443", UserAgent: tt.ua}, false)
			if !c.Allowed || c.Usage != nil {
				t.Errorf("DecideConnect: got allowed %v usage %+v, want allowed and no usage step", c.Allowed, c.Usage)
			}
		})
	}
	p, f := newStubPolicy(body, policy.Options{})
	d := p.Decide(ctx, policy.Request{Scheme: "https", Host: "other.example:443", Path: "/", UserAgent: "TrainBot/1.0", Tunnel: "example.com:443"})
	if d.Allowed || d.Reason != auditlog.ReasonBadRequest || d.RobotsURL != "" || len(f.Calls()) != 0 {
		t.Errorf("a tunnel's foreign authority: got allowed %v reason %s robots_url %q, %d fetches; want bad-request before any fetch",
			d.Allowed, d.Reason, d.RobotsURL, len(f.Calls()))
	}
	if d := p.Decide(ctx, policy.Request{Scheme: "https", Host: "EXAMPLE.com", Path: "/", UserAgent: "TrainBot/1.0", Tunnel: "example.com:443"}); d.Reason != auditlog.ReasonRule {
		t.Errorf("the tunnel's own authority, spelled otherwise: got reason %s, want %s", d.Reason, auditlog.ReasonRule)
	}
}
