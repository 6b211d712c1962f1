package policy_test

import (
	"net/url"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
)

// TestLicenseLink: the license a response names in its Link fields.
func TestLicenseLink(t *testing.T) {
	base, _ := url.Parse("https://example.com/a/page")
	tests := []struct {
		name   string
		values []string
		want   string
	}{
		{"absolute", []string{`<https://example.com/license.xml>; rel="license"; type="application/rsl+xml"`}, "https://example.com/license.xml"},
		{"relative, among others", []string{`</style.css>; rel=stylesheet, </l.xml>; type="application/RSL+xml"; rel="nofollow license"`}, "https://example.com/l.xml"},
		{"second field", []string{`</a>; rel=next`, `<https://x.example/l.xml>;rel=license;type=application/rsl+xml`}, "https://x.example/l.xml"},
		{"wrong type", []string{`</l.html>; rel="license"; type="text/html"`}, ""},
		{"no rel", []string{`</l.xml>; type="application/rsl+xml"`}, ""},
		{"comma in quoted title", []string{`</l.xml>; title="a, b"; rel=license; type="application/rsl+xml"`}, "https://example.com/l.xml"},
		{"other scheme", []string{`<ftp://x/l.xml>; rel=license; type="application/rsl+xml"`}, ""},
		{"malformed", []string{`l.xml; rel=license`}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		if got := policy.LicenseLink(tt.values, base); got != tt.want {
			t.Errorf("%s: licenseLink = %q, want %q", tt.name, got, tt.want)
		}
	}
}
