package access_test

import (
	"context"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
)

// TestFetcherBridgesDeclaredCharset: a robots.txt that is not UTF-8 is read
// in the charset its Content-Type declares, else as windows-1252, so its
// rules match the UTF-8 URLs of the site (RFC 9309 2.2.2, last paragraph),
// and as its raw octets, so that they also match the URLs of a site that
// spells them in the file's charset (rawPath).
func TestFetcherBridgesDeclaredCharset(t *testing.T) {
	cases := []struct {
		name, contentType, body, path, rawPath string
	}{
		{"windows-1251 declared", "text/plain; charset=windows-1251", "User-agent: *\nDisallow: /\xef\xf0\xe8\n", "/%D0%BF%D1%80%D0%B8", "/%EF%F0%E8"},
		{"KOI8-R declared", "text/plain; charset=KOI8-R", "User-agent: *\nDisallow: /\xd0\xd2\xc9\n", "/%D0%BF%D1%80%D0%B8", "/%d0%d2%c9"},
		{"no charset: windows-1252", "text/plain", "User-agent: *\nDisallow: /gr\xf6\xdfe\n", "/gr%C3%B6%C3%9Fe", "/gr%F6%DFe"},
		{"utf-8 body with a wrong declaration", "text/plain; charset=iso-8859-1", "User-agent: *\nDisallow: /gr\u00fc\u00dfe\n", "/gr%C3%BC%C3%9Fe", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newOrigin(t, serve(200, c.body, "Content-Type", c.contentType))
			a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Robots == nil {
				t.Fatalf("access %s: %v", a.Result, a.Err)
			}
			if v := a.Robots.Test(c.path, "ExampleBot"); v.Allowed {
				t.Errorf("%s is allowed; the bridged rule should disallow it", c.path)
			}
			if v := a.Robots.Test(c.rawPath, "ExampleBot"); c.rawPath != "" && (v.Allowed || v.Rule.Line != 2) {
				t.Errorf("%s: got allowed=%v line=%d, want disallowed by line 2 read as raw octets", c.rawPath, v.Allowed, v.Rule.Line)
			}
			if v := a.Robots.Test("/other", "ExampleBot"); !v.Allowed {
				t.Error("/other is disallowed")
			}
		})
	}
}
