package policy_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestDecideLicense: a license that refuses the request denies it when
// enforced and robots.txt allowed it; the request's mode applies after.
func TestDecideLicense(t *testing.T) {
	tests := []struct {
		name       string
		allowed    bool
		decision   policy.LicenseDecision
		enforce    bool
		mode       policy.Mode
		wantAllow  bool
		wantReason policy.Reason
		wantReport bool
	}{
		{"prohibited, enforced", true, policy.LicenseProhibited, true, "", false, auditlog.ReasonLicense, false},
		{"unreadable fails closed", true, policy.LicenseUnreadable, true, "", false, auditlog.ReasonLicense, false},
		{"token required", true, policy.LicenseRequired, true, "", false, auditlog.ReasonLicenseRequired, false},
		{"token required, report mode", true, policy.LicenseRequired, true, policy.ModeReport, false, auditlog.ReasonLicenseRequired, true},
		{"prohibited, not enforced", true, policy.LicenseProhibited, false, "", true, auditlog.ReasonRule, false},
		{"permitted", true, policy.LicensePermitted, true, "", true, auditlog.ReasonRule, false},
		{"no match", true, policy.LicenseNoMatch, true, "", true, auditlog.ReasonRule, false},
		{"unavailable", true, policy.LicenseUnavailable, true, "", true, auditlog.ReasonRule, false},
		{"robots.txt denied first", false, policy.LicenseProhibited, true, "", false, auditlog.ReasonRule, false},
	}
	p := policy.New(policy.Options{Identifier: identity.NewIdentifier(nil, nil)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.Decision{Allowed: tt.allowed, Reason: auditlog.ReasonRule}
			l := &policy.License{URL: "https://example.com/license.xml", Decision: tt.decision}
			policy.DecideLicense(&d, l, tt.enforce)
			p.MarkReportOnly(&d, policy.Pin{Mode: tt.mode})
			if d.Allowed != tt.wantAllow || d.Reason != tt.wantReason || d.ReportOnly != tt.wantReport {
				t.Errorf("got allowed %v reason %s report-only %v, want %v %s %v", d.Allowed, d.Reason, d.ReportOnly, tt.wantAllow, tt.wantReason, tt.wantReport)
			}
			if d.Usage == nil || d.Usage.License != l {
				t.Error("the license is not recorded")
			}
		})
	}
	d := policy.Decision{Allowed: true}
	policy.DecideLicense(&d, nil, true)
	if d.Usage != nil || !d.Allowed {
		t.Errorf("nil license: %+v", d)
	}
}
