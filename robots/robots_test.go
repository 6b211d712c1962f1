package robots_test

import (
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// rfcSimple is the example of RFC 9309 section 5.1.
const rfcSimple = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// rfcLongest is the example of RFC 9309 section 5.2.
const rfcLongest = `User-Agent: foobot
Allow: /example/page/
Disallow: /example/page/disallowed.gif
`

type testCase struct {
	name    string
	body    string
	agent   string
	path    string
	allowed bool
	line    int // line of the deciding rule; 0 for none
}

func runCases(t *testing.T, cases []testCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := robots.Parse([]byte(c.body)).Test(c.path, c.agent)
			line := v.Rule.Line // 0 when no rule matched
			if v.Allowed != c.allowed || line != c.line {
				t.Errorf("agent %q path %q: got allowed=%v line=%d, want allowed=%v line=%d\nbody:\n%s",
					c.agent, c.path, v.Allowed, line, c.allowed, c.line, c.body)
			}
		})
	}
}

func TestRFCExamples(t *testing.T) {
	runCases(t, []testCase{
		// 5.1, the "*" group.
		{"5.1 star gif suffix", rfcSimple, "otherbot", "/pics/a.gif", false, 2},
		{"5.1 star gif not at end", rfcSimple, "otherbot", "/pics/a.gif?x", true, 0},
		{"5.1 star example", rfcSimple, "otherbot", "/example/x", false, 3},
		{"5.1 star publications", rfcSimple, "otherbot", "/publications/x", true, 4},
		{"5.1 star publications gif", rfcSimple, "otherbot", "/publications/x.gif", true, 4},
		{"5.1 star elsewhere", rfcSimple, "otherbot", "/", true, 0},
		{"5.1 no user agent", rfcSimple, "", "/example/", false, 3},
		// 5.1, foobot.
		{"5.1 foobot root", rfcSimple, "foobot", "/", false, 7},
		{"5.1 foobot page", rfcSimple, "foobot", "/example/page.html", true, 8},
		{"5.1 foobot gif", rfcSimple, "foobot", "/example/allowed.gif", true, 9},
		{"5.1 foobot other", rfcSimple, "FooBot", "/example/other.html", false, 7},
		// 5.1, barbot and bazbot share a group.
		{"5.1 barbot page", rfcSimple, "barbot", "/example/page.html", false, 13},
		{"5.1 bazbot page", rfcSimple, "BAZBOT", "/example/page.html", false, 13},
		{"5.1 barbot other", rfcSimple, "barbot", "/example/other.html", true, 0},
		{"5.1 barbot gif", rfcSimple, "barbot", "/a.gif", true, 0},
		// 5.1, quxbot has an empty group.
		{"5.1 quxbot", rfcSimple, "quxbot", "/example/page.html", true, 0},
		// 5.2, longest match.
		{"5.2 longest disallow", rfcLongest, "foobot", "/example/page/disallowed.gif", false, 3},
		{"5.2 allow", rfcLongest, "foobot", "/example/page/other.gif", true, 2},
	})
}

func TestGroups(t *testing.T) {
	merged := "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n"
	star := "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n"
	runCases(t, []testCase{
		{"2.2.1 merge first", merged, "examplebot", "/foo", false, 2},
		{"2.2.1 merge second", merged, "ExampleBot", "/baz", false, 6},
		{"2.2.1 star fallback", star, "ExampleBot", "/foo", false, 2},
		{"2.2.1 star not for named", star, "BazBot", "/foo", true, 0},
		{"2.2.1 no group no star", "user-agent: a\ndisallow: /\n", "b", "/x", true, 0},
		{"2.2.1 no groups", "disallow: /\n", "b", "/x", true, 0},
		{"2.2.2 rules before groups ignored", "disallow: /\nuser-agent: a\nallow: /x\n", "a", "/y", true, 0},
		{"sitemap does not end group", "user-agent: a\nsitemap: http://x/s.xml\nuser-agent: b\ndisallow: /\n", "a", "/x", false, 4},
		{"crawl-delay does not end group", "user-agent: a\ncrawl-delay: 5\nuser-agent: b\ndisallow: /\n", "a", "/x", false, 4},
		{"rule ends agent run", "user-agent: a\ndisallow: /a\nuser-agent: b\ndisallow: /b\n", "a", "/b", true, 0},
		{"agent with version", "user-agent: Googlebot/2.1\ndisallow: /\n", "googlebot", "/x", false, 2},
		{"empty disallow allows", "user-agent: *\ndisallow:\n", "a", "/x", true, 0},
		{"allow wins tie", "user-agent: *\ndisallow: /a\nallow: /a\n", "a", "/a", true, 3},
		{"longest wins over order", "user-agent: *\nallow: /a\ndisallow: /ab\n", "a", "/abc", false, 3},
		{"robots.txt implicit", "user-agent: *\ndisallow: /\n", "a", "/robots.txt", true, 0},
		{"case-sensitive path", "user-agent: *\ndisallow: /A\n", "a", "/a", true, 0},
		{"missing colon", "user-agent a\ndisallow /x\n", "a", "/x", false, 2},
		{"misspelt disallow", "user-agent: a\ndissallow: /x\n", "a", "/x", false, 2},
		{"comment", "user-agent: a # me\ndisallow: /x # not /y\n", "a", "/x", false, 2},
		{"CR line ends", "user-agent: a\rdisallow: /x\r", "a", "/x", false, 2},
		{"CRLF line ends", "user-agent: a\r\ndisallow: /x\r\n", "a", "/x", false, 2},
		{"BOM", "\xEF\xBB\xBFuser-agent: a\ndisallow: /x\n", "a", "/x", false, 2},
	})
}

func TestSpecialCharacters(t *testing.T) {
	runCases(t, []testCase{
		{"star any", "user-agent: *\ndisallow: /a*c\n", "x", "/abbbc", false, 2},
		{"star matches slash", "user-agent: *\ndisallow: /a*c\n", "x", "/a/b/c", false, 2},
		{"dollar end", "user-agent: *\ndisallow: /a$\n", "x", "/a", false, 2},
		{"dollar not end", "user-agent: *\ndisallow: /a$\n", "x", "/ab", true, 0},
		{"dollar literal mid", "user-agent: *\ndisallow: /a$b\n", "x", "/a$b", false, 2},
		{"encoded star literal", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "x", "/path/file-with-a-*.html", false, 2},
		{"encoded star not wildcard", "user-agent: *\ndisallow: /path/file-with-a-%2A.html\n", "x", "/path/file-with-a-b.html", true, 0},
		{"encoded dollar literal", "user-agent: *\ndisallow: /path/foo-%24\n", "x", "/path/foo-$", false, 2},
		{"star dollar", "user-agent: *\ndisallow: /*.php$\n", "x", "/a/b.php", false, 2},
		{"star dollar query", "user-agent: *\ndisallow: /*.php$\n", "x", "/a/b.php?x", true, 0},
		{"query pattern", "user-agent: *\ndisallow: /*?sort=\n", "x", "/list?sort=asc", false, 2},
	})
}

func TestPercentEncoding(t *testing.T) {
	runCases(t, []testCase{
		// The table of RFC 9309 2.2.2.
		{"query kept", "user-agent: *\ndisallow: /foo/bar?baz=quz\n", "x", "/foo/bar?baz=quz", false, 2},
		{"reserved stays encoded", "user-agent: *\ndisallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n", "x", "/foo/bar?baz=https%3a%2f%2ffoo.bar", false, 2},
		{"reserved not decoded", "user-agent: *\ndisallow: /foo/bar?baz=https://\n", "x", "/foo/bar?baz=https%3A%2F%2F", true, 0},
		{"non-ascii uri", "user-agent: *\ndisallow: /foo/bar/%E3%83%84\n", "x", "/foo/bar/ツ", false, 2},
		{"non-ascii pattern", "user-agent: *\ndisallow: /foo/bar/ツ\n", "x", "/foo/bar/%e3%83%84", false, 2},
		{"unreserved decoded", "user-agent: *\ndisallow: /foo/bar/baz\n", "x", "/foo/bar/%62%61%7A", false, 2},
		{"unreserved decoded in pattern", "user-agent: *\ndisallow: /foo/bar/%62%61%7A\n", "x", "/foo/bar/baz", false, 2},
		{"invalid percent", "user-agent: *\ndisallow: /a%zz\n", "x", "/a%zz", false, 2},
		{"invalid percent vs %25", "user-agent: *\ndisallow: /a%25zz\n", "x", "/a%zz", false, 2},
	})
}

func TestNormalizePath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"},
		{"/a%2fb", "/a%2Fb"},
		{"/a%", "/a%25"},
		{"/a%4", "/a%254"},
		{"/a b", "/a%20b"},
		{"/a*b$", "/a%2Ab%24"},
		{"/a\x00b", "/a%00b"},
		{"/%7e%41", "/~A"},
	}
	for _, c := range cases {
		got := robots.NormalizePath(c.in)
		if got != c.want {
			t.Errorf("NormalizePath(%q): got %q, want %q", c.in, got, c.want)
		}
		if again := robots.NormalizePath(got); again != got {
			t.Errorf("NormalizePath not idempotent on %q: %q then %q", c.in, got, again)
		}
	}
}

func TestPathOf(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://example.com/a/b?c=d#e", "/a/b?c=d"},
		{"http://example.com", "/"},
		{"http://example.com?x", "/?x"},
		{"https://user@example.com:8443/p", "/p"},
		{"/already/a/path?q", "/already/a/path?q"},
		{"//example.com/p", "/p"},
		{"http://example.com/%zz", "/%zz"},
		{"", "/"},
	}
	for _, c := range cases {
		if got := robots.PathOf(c.in); got != c.want {
			t.Errorf("PathOf(%q): got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseLimit(t *testing.T) {
	head := "user-agent: *\ndisallow: /a\n"
	filler := strings.Repeat("# padding\n", (robots.DefaultMaxBytes-len(head))/10)
	tail := "disallow: /b\n"
	r := robots.Parse([]byte(head + filler + tail))
	if !r.Truncated {
		t.Fatalf("body of %d bytes: Truncated = false, want true", len(head+filler+tail))
	}
	if v := r.Test("/a", "x"); v.Allowed {
		t.Errorf("/a before the limit: allowed, want disallowed")
	}
	if v := r.Test("/b", "x"); !v.Allowed {
		t.Errorf("/b past the limit: disallowed, want allowed (ignored)")
	}
	// A rule cut by the limit is dropped whole, never shortened.
	cut := head + strings.Repeat("#", robots.DefaultMaxBytes-len(head)-len("disallow: /")) + "\ndisallow: /secret\n"
	if v := robots.Parse([]byte(cut)).Test("/s", "x"); !v.Allowed {
		t.Errorf("cut rule /secret shortened to a prefix: /s disallowed")
	}
	small := robots.Options{MaxBytes: 1}.Parse([]byte(head))
	if small.Truncated {
		t.Errorf("MaxBytes below 500 KiB must be raised to 500 KiB")
	}
}

func TestRecords(t *testing.T) {
	r := robots.Parse([]byte("sitemap: http://a/s.xml\nuser-agent: *\ncrawl-delay: 10\nhost: a\nnonsense line\ndisallow: /x\n"))
	if s := r.Sitemaps(); len(s) != 1 || s[0] != "http://a/s.xml" {
		t.Errorf("Sitemaps: got %q", s)
	}
	if recs := r.Records(); len(recs) != 2 || recs[0].Key != "crawl-delay" || recs[0].Value != "10" || recs[0].Group != 0 {
		t.Errorf("Records: got %+v", recs)
	}
	if r.Ignored != 1 {
		t.Errorf("Ignored: got %d, want 1", r.Ignored)
	}
}

// TestPathologicalWildcards guards against exponential backtracking: a
// backtracking matcher takes longer than the test timeout on these.
func TestPathologicalWildcards(t *testing.T) {
	pat := "/" + strings.Repeat("*a", 40) + "*b"
	body := "user-agent: *\ndisallow: " + pat + "\n"
	r := robots.Parse([]byte(body))
	long := "/" + strings.Repeat("a", 100000)
	for i := 0; i < 100; i++ {
		if v := r.Test(long, "x"); !v.Allowed {
			t.Fatalf("%s matched a path without b", pat)
		}
	}
	if v := r.Test(long+"b", "x"); v.Allowed {
		t.Fatalf("%s did not match a path ending in b", pat)
	}
}

func TestHostileInput(t *testing.T) {
	inputs := []string{
		"", "\x00\x00", ":", "::::", "user-agent:", "disallow", "user-agent: *\nallow: $", "user-agent: *\ndisallow: *",
		"user-agent: *\ndisallow: %", "\xEF\xBB", strings.Repeat("user-agent: a\n", 1000), "\r\r\r\n\n",
		"user-agent: *\ndisallow: /" + strings.Repeat("*", 10000),
	}
	for _, in := range inputs {
		r := robots.Parse([]byte(in))
		_ = r.Test("/x", "a")
		_ = r.Test("", "*")
	}
}

func TestTestNoAlloc(t *testing.T) {
	r := robots.Parse([]byte(rfcSimple))
	allocs := testing.AllocsPerRun(100, func() {
		_ = r.Test("/example/page.html", "FooBot")
		_ = r.Test("/x.gif", "otherbot")
	})
	if allocs != 0 {
		t.Errorf("Test allocated %.1f times per run, want 0", allocs)
	}
}

func TestLimits(t *testing.T) {
	long := "user-agent: *\ndisallow: /" + strings.Repeat("a", 100) + "\nallow: /b\n"
	r := robots.Options{MaxLineBytes: 20}.Parse([]byte(long))
	if r.Limited != 1 {
		t.Errorf("MaxLineBytes 20: Limited = %d, want 1", r.Limited)
	}
	// "disallow: /aaaaaaaaa" (20 octets) still applies, truncated.
	if v := r.Test("/aaaaaaaaaz", "x"); v.Allowed {
		t.Errorf("truncated rule: /aaaaaaaaaz allowed, want disallowed")
	}
	if v := r.Test("/b", "x"); !v.Allowed || !v.Matched() {
		t.Errorf("the line after a long line was not parsed")
	}
	many := "user-agent: a\ndisallow: /1\ndisallow: /2\ndisallow: /3\nuser-agent: b\ndisallow: /4\n"
	r = robots.Options{MaxRulesPerGroup: 2}.Parse([]byte(many))
	if r.Limited != 1 {
		t.Errorf("MaxRulesPerGroup 2: Limited = %d, want 1", r.Limited)
	}
	if v := r.Test("/3", "a"); !v.Allowed {
		t.Errorf("rule past the group limit applied")
	}
	if v := r.Test("/2", "a"); v.Allowed {
		t.Errorf("rule within the group limit dropped")
	}
	if v := r.Test("/4", "b"); v.Allowed {
		t.Errorf("the next group lost its rules")
	}
}
