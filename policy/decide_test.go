package policy_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

func TestDecideAccess(t *testing.T) {
	r := robots.Parse([]byte("User-agent: *\nDisallow: /action/\n"))
	ok := &policy.Access{Result: policy.Successful, Status: 200, Robots: r}
	tests := []struct {
		name     string
		a        *policy.Access
		path     string
		allowed  bool
		reason   policy.Reason
		resolved string
	}{
		{"rule", ok, "/action/x", false, auditlog.ReasonRule, ""},
		{"no rule", ok, "/other", true, auditlog.ReasonNoMatch, ""},
		{"empty path is /", ok, "", true, auditlog.ReasonNoMatch, ""},
		{"a reading decides", ok, "/a/..%2Faction/x", false, auditlog.ReasonRule, "/action/x"},
		{"robots.txt without an access", nil, "/robots.txt", true, auditlog.ReasonImplicit, ""},
		{"robots.txt whatever the access", &policy.Access{Result: policy.Unreachable}, "/robots.txt?x=1", true, auditlog.ReasonImplicit, ""},
		{"not robots.txt under every reading", nil, "/robots.txt/../action/x", false, auditlog.ReasonUnreachable, "/action/x"},
		{"unavailable", &policy.Access{Result: policy.Unavailable, Status: 404}, "/action/x", true, auditlog.ReasonUnavailable, ""},
		{"unreachable", &policy.Access{Result: policy.Unreachable, Status: 500}, "/x", false, auditlog.ReasonUnreachable, ""},
		{"destination refused", &policy.Access{Result: policy.Unreachable, Refused: true}, "/x", false, auditlog.ReasonDestination, ""},
		{"no access: fail closed", nil, "/x", false, auditlog.ReasonUnreachable, ""},
		{"unknown result: fail closed", &policy.Access{Result: "bogus"}, "/x", false, auditlog.ReasonUnreachable, ""},
		{"successful without rules: fail closed", &policy.Access{Result: policy.Successful}, "/x", false, auditlog.ReasonUnreachable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.DecideAccess(tt.a, tt.path, []string{"bot"})
			if d.Allowed != tt.allowed || d.Reason != tt.reason || d.ResolvedPath != tt.resolved {
				t.Errorf("DecideAccess(%+v, %q): got %v %s %q, want %v %s %q", tt.a, tt.path, d.Allowed, d.Reason, d.ResolvedPath,
					tt.allowed, tt.reason, tt.resolved)
			}
		})
	}
}

func TestRequestPath(t *testing.T) {
	tests := []struct{ target, want string }{
		{"", "/"},
		{"/a?b", "/a?b"},
		{"//x/y", "//x/y"}, // origin-form: a path, not an authority
		{"/a#b", "/a%23b"},
		{"http://example.com/a/../b?q=1", "/a/../b?q=1"},
		{"http://example.com//x", "//x"},
		{"http://example.com", "/"},
		{"http://example.com?q", "/?q"},
		{"https://example.com:8443/a#b#c", "/a%23b%23c"},
	}
	for _, tt := range tests {
		if got := policy.RequestPath(tt.target); got != tt.want {
			t.Errorf("RequestPath(%q): got %q, want %q", tt.target, got, tt.want)
		}
	}
}
