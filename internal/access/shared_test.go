package access_test

import (
	"context"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestParseBodyCompilesLikeTheFetcher: a body compiled from an Access's
// Raw and Header (as a fleet replica compiles a shared body) decides every
// path as the fetcher's own compilation does: the declared charset bridges
// the lines that are not UTF-8, and the parse limit cuts the same line.
// A charset declared past the kept part of a long Content-Type is ignored
// by both alike.
func TestParseBodyCompilesLikeTheFetcher(t *testing.T) {
	long := "User-agent: *\n" + strings.Repeat("Disallow: /filler\n", 30000) + "Disallow: /past-the-limit\n"
	cases := []struct {
		name, contentType, body string
		paths                   []string
	}{
		{"windows-1251 declared", "text/plain; charset=windows-1251", "User-agent: *\nDisallow: /\xef\xf0\xe8\n",
			[]string{"/%D0%BF%D1%80%D0%B8", "/%EF%F0%E8", "/other"}},
		{"no charset: windows-1252", "text/plain", "User-agent: *\nDisallow: /gr\xf6\xdfe\n",
			[]string{"/gr%C3%B6%C3%9Fe", "/gr%F6%DFe", "/other"}},
		{"past the parse limit", "text/plain", long, []string{"/filler", "/past-the-limit", "/other"}},
		{"charset past the kept Content-Type", "text/plain; x=" + strings.Repeat("p", access.MaxKeptHeaderValue) + "; charset=windows-1251",
			"User-agent: *\nDisallow: /\xef\xf0\xe8\n", []string{"/%D0%BF%D1%80%D0%B8", "/%C3%AF%C3%B0%C3%A8", "/%EF%F0%E8", "/other"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newOrigin(t, serve(200, c.body, "Content-Type", c.contentType))
			a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Robots == nil || a.Raw == nil {
				t.Fatalf("access %s: %v", a.Result, a.Err)
			}
			got := access.ParseBody(a.Raw, a.Header, robots.Options{})
			for _, p := range c.paths {
				want := a.Robots.Test(p, "ExampleBot")
				v := got.Test(p, "ExampleBot")
				if v.Allowed != want.Allowed || v.Rule.Line != want.Rule.Line {
					t.Errorf("%s: ParseBody gives allowed=%v line %d, the fetcher allowed=%v line %d",
						p, v.Allowed, v.Rule.Line, want.Allowed, want.Rule.Line)
				}
			}
			if got.Truncated != a.Robots.Truncated || got.Size != a.Robots.Size {
				t.Errorf("size %d truncated %v, want %d %v", got.Size, got.Truncated, a.Robots.Size, a.Robots.Truncated)
			}
		})
	}
}
