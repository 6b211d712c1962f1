package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// pathRobots disallows /private (line 2) and the raw spelling /a//b
// (line 3), and allows /public (line 4).
const pathRobots = "User-agent: *\nDisallow: /private\nDisallow: /a//b\nAllow: /public\n"

func TestResolvePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"/a/b/c.html", "/a/b/c.html"},
		{"/public/../private/secret.txt", "/private/secret.txt"},
		{"/./private/secret.txt", "/private/secret.txt"},
		{"//private/secret.txt", "/private/secret.txt"},
		{"/public/%2e%2e/private/x", "/private/x"},
		{"/public/%2E%2e/private/x", "/private/x"},
		{"/public/.%2e/private/x", "/private/x"},
		{"/public/%2E./private/x", "/private/x"},
		{"/public/..%2Fprivate/x", "/private/x"},
		{"/public/..%2fprivate/x", "/private/x"},
		{"/public/..%5Cprivate/x", "/private/x"},
		{`/public\..\private\x`, "/private/x"},
		{"/%2e/private", "/private"},
		{"/a//b", "/a/b"},
		{"/a///b//", "/a/b/"},
		{"/a/b//../c", "/a/c"}, // merged first, then dot segments
		{"/a/b/..", "/a/"},
		{"/a/.", "/a/"},
		{"/a/./", "/a/"},
		{"/..", "/"},
		{"/../../x", "/x"}, // RFC 3986 5.2.4: ".." above the root is dropped
		{"/a/b/../../../../c", "/c"},
		{"/a/...", "/a/..."}, // not a dot segment
		{"/a/..b/c", "/a/..b/c"},
		{"/a/%2e%2e%2e", "/a/%2e%2e%2e"},
		{"/a/b/..?x=/../y", "/a/?x=/../y"},               // the query is never resolved
		{"/a/%2e%2e?%2e%2e//", "/?%2e%2e//"},             // nor unescaped
		{"/a;x/..;y/b", "/a;x/..;y/b"},                   // ";" is kept by this reading
		{"/robots.txt/../private", "/private"},           // no longer /robots.txt
		{"/public/%252e%252e/x", "/public/%252e%252e/x"}, // one decoding only
	}
	for _, tt := range tests {
		if got := policy.ResolvePath(tt.in); got != tt.want {
			t.Errorf("ResolvePath(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMatchPath: every spelling of a disallowed path is denied by the rule
// that disallows it, ordinary paths (even with "//") keep their raw
// verdict, and a rule written with "//" still matches its raw spelling.
func TestMatchPath(t *testing.T) {
	r := robots.Parse([]byte(pathRobots))
	tests := []struct {
		name, path   string
		wantAllowed  bool
		wantLine     int
		wantResolved string
	}{
		{"canonical", "/private/secret.txt", false, 2, ""},
		{"dot-dot", "/public/../private/secret.txt", false, 2, "/private/secret.txt"},
		{"dot", "/./private/secret.txt", false, 2, "/private/secret.txt"},
		{"empty segment", "//private/secret.txt", false, 2, "/private/secret.txt"},
		{"escaped dots", "/public/%2e%2e/private/secret.txt", false, 2, "/private/secret.txt"},
		{"escaped dots upper case", "/public/%2E%2E/private/secret.txt", false, 2, "/private/secret.txt"},
		{"half-escaped dots", "/public/.%2e/private/secret.txt", false, 2, "/private/secret.txt"},
		{"escaped slash", "/public/..%2Fprivate/secret.txt", false, 2, "/private/secret.txt"},
		{"escaped slash lower case", "/public/..%2fprivate/secret.txt", false, 2, "/private/secret.txt"},
		{"backslash", `/public\..\private\secret.txt`, false, 2, "/private/secret.txt"},
		{"escaped backslash", "/public/..%5Cprivate/secret.txt", false, 2, "/private/secret.txt"},
		{"above the root", "/../../private/secret.txt", false, 2, "/private/secret.txt"},
		{"escaped everything", "/%2e%2e%2f%2E%2E%2fprivate%2fsecret.txt", false, 2, "/private/secret.txt"},
		{"with a query", "/public/../private/secret.txt?a=/../public", false, 2, "/private/secret.txt?a=/../public"},
		{"robots.txt then up", "/robots.txt/../private", false, 2, "/private"},
		{"percent-encoded letter after resolution", "/x/../%70rivate", false, 2, "/private"},
		// Origins that keep empty segments (WHATWG URL, Apache with
		// MergeSlashes Off) pop "" with "..": /private/secret.
		{"empty segment absorbs ..", "/x/../private//../secret", false, 2, "/private/secret"},
		// Origins that do not take %2F for "/" keep private.
		{"escaped slash kept in a segment", "/q/../private/a%2F..%2F../secret", false, 2, "/private/a%2F..%2F../secret"},
		// Tomcat and Jetty cut ";parameters": "..;" is "..".
		{"path parameter", "/public/..;/private/secret.txt", false, 2, "/private/secret.txt"},
		// Tomcat cuts ";x", then merges the empty segment, then "..".
		{"segment empty without its parameter", "/q/;x/../private/s", false, 2, "/private/s"},
		// Origins that resolve before unescaping keep %2e%2e.
		{"escaped dots kept", "/q/../private/%2e%2e/secret", false, 2, "/private/../secret"},

		{"ordinary", "/public/page.html", true, 4, ""},
		{"empty segment elsewhere", "/a//c", true, 0, "/a/c"},
		{"dot-dot elsewhere", "/public/x/../y", true, 4, "/public/y"},
		{"dot-dot out of private", "/private/../public", false, 2, "/public"}, // the raw spelling is disallowed
		{"rule with //, raw spelling", "/a//b", false, 3, "/a/b"},
		{"rule with //, resolved to it without merging", "/a//x/../b", false, 3, "/a//b"},
		{"query is not a path", "/public?next=/../private", true, 4, ""},
		{"private-looking query", "/public?p=%2e%2e%2fprivate", true, 4, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, resolved := policy.MatchPath(r, tt.path, "examplebot")
			line := 0
			if v.Matched() {
				line = v.Rule.Line
			}
			if v.Allowed != tt.wantAllowed || line != tt.wantLine || resolved != tt.wantResolved {
				t.Errorf("MatchPath(%q): got allowed=%v line %d resolved %q, want allowed=%v line %d resolved %q",
					tt.path, v.Allowed, line, resolved, tt.wantAllowed, tt.wantLine, tt.wantResolved)
			}
		})
	}
}

// TestDecidePathSpellings drives spellings through Decide: the decision,
// its rule, the recorded resolved path, and the implicit allow of
// /robots.txt, which holds only when every reading is /robots.txt.
func TestDecidePathSpellings(t *testing.T) {
	tests := []struct {
		path         string
		wantAllowed  bool
		wantReason   policy.Reason
		wantLine     int
		wantResolved string
		wantFetches  int
	}{
		{"/public/../private/secret.txt", false, auditlog.ReasonRule, 2, "/private/secret.txt", 1},
		{"/public/..%2Fprivate/secret.txt", false, auditlog.ReasonRule, 2, "/private/secret.txt", 1},
		{`/public\..\private\secret.txt`, false, auditlog.ReasonRule, 2, "/private/secret.txt", 1},
		{"/public/..;/private/secret.txt", false, auditlog.ReasonRule, 2, "/private/secret.txt", 1},
		{"/a//c", true, auditlog.ReasonNoMatch, 0, "/a/c", 1},
		{"/public/page", true, auditlog.ReasonRule, 4, "", 1},
		{"/robots.txt", true, auditlog.ReasonImplicit, 0, "", 0},
		{"/robots%2Etxt?x=/../private", true, auditlog.ReasonImplicit, 0, "", 0},
		{"/robots.txt/../private", false, auditlog.ReasonRule, 2, "/private", 1},
		{"/robots.txt%2F..%2Fprivate", false, auditlog.ReasonRule, 2, "/private", 1},
		{"/robots.txt%2F..", true, auditlog.ReasonNoMatch, 0, "/", 1},
		{"/x/../robots.txt", true, auditlog.ReasonNoMatch, 0, "/robots.txt", 1},
		{"/private/../robots.txt", false, auditlog.ReasonRule, 2, "/robots.txt", 1},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, f := newStubPolicy(pathRobots, policy.Options{})
			d := p.Decide(context.Background(), policy.Request{Scheme: "http", Host: "example.com", Path: tt.path, UserAgent: uaExampleBot})
			if d.Allowed != tt.wantAllowed || d.Reason != tt.wantReason || ruleLine(d) != tt.wantLine || d.ResolvedPath != tt.wantResolved {
				t.Errorf("Decide(%q): got allowed=%v %s line %d resolved %q, want allowed=%v %s line %d resolved %q",
					tt.path, d.Allowed, d.Reason, ruleLine(d), d.ResolvedPath, tt.wantAllowed, tt.wantReason, tt.wantLine, tt.wantResolved)
			}
			if n := len(f.Calls()); n != tt.wantFetches {
				t.Errorf("Decide(%q): got %d robots.txt fetches, want %d", tt.path, n, tt.wantFetches)
			}
		})
	}
}

// TestMatchPathOrdinaryNoAlloc: an ordinary path has one reading, and
// matching it allocates nothing.
func TestMatchPathOrdinaryNoAlloc(t *testing.T) {
	r := robots.Parse([]byte(pathRobots))
	for _, p := range []string{"/", "/public/page.html", "/a/b.c/d?q=1&r=/../x", "/a%20b/c.d", "/private/x"} {
		allocs := testing.AllocsPerRun(100, func() { policy.MatchPath(r, p, "examplebot") })
		if allocs != 0 {
			t.Errorf("MatchPath(%q): got %v allocations, want 0", p, allocs)
		}
	}
}

func BenchmarkMatchPath(b *testing.B) {
	r := robots.Parse([]byte(pathRobots))
	for _, bc := range []struct{ name, path string }{
		{"ordinary", "/public/some/longer/page.html?q=1"},
		{"dot-dot", "/public/../private/secret.txt"},
		// Every feature at once: the most readings a path can have (64).
		{"every-feature", `/a//b/..;x/%2e%2E%2f..%5c\c/../private/secret.txt`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.path)))
			for b.Loop() {
				policy.MatchPath(r, bc.path, "examplebot")
			}
		})
	}
}

// segChar maps a fuzz byte to a letter or digit, so that generated
// segments hold nothing an origin would resolve.
func segChar(c byte) byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_"
	return alphabet[int(c)%len(alphabet)]
}

// segments turns fuzz bytes into 1 to 4 non-empty plain segments.
func segments(b []byte) []string {
	var segs []string
	for _, part := range strings.Split(string(b), "/") {
		if len(segs) == 4 {
			break
		}
		if part == "" {
			continue
		}
		s := []byte(part)
		for i := range s {
			s[i] = segChar(s[i])
		}
		segs = append(segs, string(s))
	}
	if len(segs) == 0 {
		segs = []string{"p"}
	}
	return segs
}

// Spellings of "." and of the separator that some origin resolves.
var (
	fuzzDots = []string{".", "%2e", "%2E"}
	fuzzSeps = []string{"/", "%2F", "%2f", `\`, "%5C", "%5c"}
)

// spell writes segs as a path, each op byte choosing what goes before the
// next segment (nothing, "./", "junk/../", an empty segment, "junk/..;x/",
// or ";x/"), whether ";x" follows it, and how its separators and dots are
// spelled.
func spell(segs []string, ops []byte) string {
	var b strings.Builder
	op := func(i int) byte {
		if len(ops) == 0 {
			return 0
		}
		return ops[i%len(ops)]
	}
	sep := func(i int) string { return fuzzSeps[int(op(i)>>3)%len(fuzzSeps)] }
	dot := func(i int) string { return fuzzDots[int(op(i)>>5)%len(fuzzDots)] }
	k := 0
	next := func() int { k++; return k }
	b.WriteString("/")
	if op(0)&0x80 != 0 {
		b.WriteString(dot(next()) + dot(next()) + sep(next())) // above the root
	}
	for i, s := range segs {
		switch op(next()) % 7 {
		case 1:
			b.WriteString(dot(next()) + sep(next()))
		case 2:
			b.WriteString("junk" + sep(next()) + dot(next()) + dot(next()) + sep(next()))
		case 3:
			b.WriteString(sep(next()))
		case 4:
			b.WriteString("junk" + sep(next()) + dot(next()) + dot(next()) + ";x" + sep(next()))
		case 5:
			b.WriteString(";x" + sep(next())) // empty once ";x" is cut
		}
		b.WriteString(s)
		if op(next())%5 == 0 {
			b.WriteString(";x")
		}
		if i < len(segs)-1 {
			b.WriteString(sep(next()))
		}
	}
	return b.String()
}

// FuzzPathSpellings: for a random path under a disallowed prefix, every
// spelling made of dot segments, empty segments, escaped dots, escaped and
// back slashes and ";parameters" is denied by the prefix's rule. Arbitrary
// input never panics, and the resolved reading is a fixed point.
func FuzzPathSpellings(f *testing.F) {
	f.Add([]byte("private"), []byte("secret.txt"), []byte{0, 2, 9, 17, 30, 0x83}, "/public/../private/secret.txt")
	f.Add([]byte("a/b"), []byte("c"), []byte{4, 5, 0x40, 0xe3}, `/public\..\private`)
	f.Add([]byte("x"), []byte(""), []byte{}, "/x/../private//../secret?q=/../")
	f.Fuzz(func(t *testing.T, prefix, rest, ops []byte, arbitrary string) {
		pre := segments(prefix)
		segs := append(append([]string{}, pre...), segments(rest)...)
		r := robots.Parse([]byte("User-agent: *\nAllow: /\nDisallow: /" + strings.Join(pre, "/") + "\n"))
		p := spell(segs, ops)
		if v, _ := policy.MatchPath(r, p, "bot"); v.Allowed || v.Rule.Line != 3 {
			t.Fatalf("MatchPath(%q) under Disallow: /%s: got allowed=%v rule %q, want denied by line 3",
				p, strings.Join(pre, "/"), v.Allowed, v.Rule.Text())
		}

		v, resolved := policy.MatchPath(r, arbitrary, "bot")
		if v.Matched() && v.Allowed != v.Rule.Allow {
			t.Fatalf("MatchPath(%q): allowed=%v but rule %q", arbitrary, v.Allowed, v.Rule.Text())
		}
		if resolved != "" && !strings.HasPrefix(resolved, "/") {
			t.Fatalf("MatchPath(%q): resolved %q does not start with /", arbitrary, resolved)
		}
		once := policy.ResolvePath(arbitrary)
		if twice := policy.ResolvePath(once); twice != once {
			t.Fatalf("ResolvePath(%q) = %q, but ResolvePath of that = %q", arbitrary, once, twice)
		}
	})
}
