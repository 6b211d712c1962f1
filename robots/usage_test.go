package robots_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// attachIntro is the robots.txt example of draft-ietf-aipref-attach-05
// section 1.2 ("a server might include the same directive in its
// robots.txt file").
const attachIntro = `User-Agent: *
Allow: /
Content-Usage: train-ai=n
`

// attachExample is figure 2 of draft-ietf-aipref-attach-05 section 3.4,
// "Example robots.txt file".
const attachExample = `User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
`

type usageCase struct {
	name    string
	body    string
	agent   string
	path    string
	label   string
	allowed bool        // the crawl verdict
	want    robots.Pref // the preference for label
	line    int         // the line of the rule that stated it
}

func runUsage(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := robots.Parse([]byte(c.body)).Usage(c.path, c.agent)
			got := u.Get(c.label)
			if u.Verdict.Allowed != c.allowed || got.Pref != c.want || got.Line != c.line || got.Label != c.label {
				t.Errorf("agent %q path %q label %q: got allowed=%v %s line %d, want allowed=%v %s line %d\nbody:\n%s",
					c.agent, c.path, c.label, u.Verdict.Allowed, got.Pref, got.Line, c.allowed, c.want, c.line, c.body)
			}
		})
	}
}

// TestUsageAttachExamples covers every robots.txt example of
// draft-ietf-aipref-attach-05, with table 1 of section 3.4 ("Sample of usage
// preferences for different paths") row by row.
func TestUsageAttachExamples(t *testing.T) {
	runUsage(t, []usageCase{
		{"1.2 any path", attachIntro, "AnyBot", "/some/page", "train-ai", true, robots.PrefDisallow, 3},
		{"1.2 search unknown", attachIntro, "AnyBot", "/some/page", "search", true, robots.PrefUnknown, 0},
		{"table 1 /test", attachExample, "OtherBot", "/test", "train-ai", true, robots.PrefDisallow, 4},
		{"table 1 /never/test N/A", attachExample, "OtherBot", "/never/test", "train-ai", false, robots.PrefUnknown, 0},
		{"table 1 /ai-ok/test", attachExample, "OtherBot", "/ai-ok/test", "train-ai", true, robots.PrefAllow, 5},
		{"ExampleBot uses the second group", attachExample, "ExampleBot", "/never/test", "train-ai", true, robots.PrefAllow, 9},
		{"ExampleBot elsewhere", attachExample, "ExampleBot", "/test", "train-ai", true, robots.PrefAllow, 9},
	})
}

// TestUsageHeaderExample parses the HTTP example of attach-05 section 1.2,
// "Content-Usage: train-ai=n", as a statement.
func TestUsageHeaderExample(t *testing.T) {
	s := robots.ParseStatement("train-ai=n")
	if !s.Valid() || s.Pref("train-ai") != robots.PrefDisallow || s.Pref("search") != robots.PrefUnknown {
		t.Errorf("train-ai=n: got valid=%v train-ai=%s search=%s", s.Valid(), s.Pref("train-ai"), s.Pref("search"))
	}
}

// TestStatementVocabExamples covers every statement example of
// draft-ietf-aipref-vocab-07 section 6, and its rules for failures.
func TestStatementVocabExamples(t *testing.T) {
	cases := []struct {
		name, text string
		valid      bool
		want       map[string]robots.Pref
	}{
		{"6: allow training, disallow search", "train-ai=y, search=n", true,
			map[string]robots.Pref{"train-ai": robots.PrefAllow, "search": robots.PrefDisallow, "other": robots.PrefUnknown}},
		{"6.5.1: duplicates, last wins, not tokens", `train-ai=y, train-ai, search=n, search="n"`, true,
			map[string]robots.Pref{"train-ai": robots.PrefUnknown, "search": robots.PrefUnknown}},
		{"6.5.2: parameters of the last value only", "train-ai;allow=n, train-ai=y", true,
			map[string]robots.Pref{"train-ai": robots.PrefAllow}},
		// vocab-07 says this "has parameters even though the preference is
		// unknown"; with its trailing ";" it is not an RFC 9651 Dictionary
		// (4.2.3.2 needs a key after ";"), which gives unknown too.
		{"6.5.2: parameters, unknown", `train-ai;has;parameters="?";`, false,
			map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"6.5.2 without the trailing semicolon", `train-ai;has;parameters="?"`, true,
			map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"6.5.1: upper-case key fails parsing", "Train-AI=n, search=n", false,
			map[string]robots.Pref{"search": robots.PrefUnknown, "Train-AI": robots.PrefUnknown}},
		{"6.2: tokens other than y and n", "train-ai=yes, search=N", true,
			map[string]robots.Pref{"train-ai": robots.PrefUnknown, "search": robots.PrefUnknown}},
		{"6.4: unknown labels and parameters ignored", "future-use=n;why=1, train-ai=n;x", true,
			map[string]robots.Pref{"train-ai": robots.PrefDisallow, "search": robots.PrefUnknown}},
		{"labels are case-sensitive", "search=y", true, map[string]robots.Pref{"Search": robots.PrefUnknown}},
		{"empty", "", true, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"trailing comma", "train-ai=n,", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"not ASCII", "train-ai=n, search=\"é\"", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"every bare item type", `a=1, b=-2.5, c="s\"", d=:aGk=:, e=?1, f=@1700000000, g=%"f%c3%bc", h=(y n);p, search=y`, true,
			map[string]robots.Pref{"search": robots.PrefAllow, "h": robots.PrefUnknown}},
		{"inner list is not a token", "train-ai=(n)", true, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"bad display string", `g=%"%c3", train-ai=n`, false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"decimal with 4 fraction digits", "a=1.2345, train-ai=n", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"date must be an integer", "a=@1.5, train-ai=n", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"RFC 9651 4.2.4: 12 integer digits of a decimal", "a=123456789012.123, train-ai=n", true, map[string]robots.Pref{"train-ai": robots.PrefDisallow}},
		{"RFC 9651 4.2.4: 13 integer digits of a decimal", "a=1234567890123.1, train-ai=n", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"RFC 9651 4.2.4: 15 digits of an integer", "a=-999999999999999, train-ai=n", true, map[string]robots.Pref{"train-ai": robots.PrefDisallow}},
		{"RFC 9651 4.2.4: 16 digits of an integer", "a=1234567890123456, train-ai=n", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
		{"RFC 9651 4.2.7: padding", "a=:YQ==:, b=:YQ:, train-ai=n", true, map[string]robots.Pref{"train-ai": robots.PrefDisallow}},
		{"RFC 9651 4.2.7: one octet left over", "a=:Y:, train-ai=n", false, map[string]robots.Pref{"train-ai": robots.PrefUnknown}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := robots.ParseStatement(c.text)
			if s.Valid() != c.valid {
				t.Errorf("%q: got valid=%v, want %v", c.text, s.Valid(), c.valid)
			}
			for label, want := range c.want {
				if got := s.Pref(label); got != want {
					t.Errorf("%q: Pref(%q) got %s, want %s", c.text, label, got, want)
				}
			}
		})
	}
}

// twoGroups has a group for a and one for b; the allow lines end them.
const twoGroups = "User-agent: a\nAllow: /\nContent-Usage: /x train-ai=y\n\nUser-agent: b\nAllow: /\nContent-Usage: /x train-ai=n\n"

// TestUsageRules covers longest match, conflicts, parse failures, groups and
// limits of Content-Usage rules.
func TestUsageRules(t *testing.T) {
	conflict := "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n, search=y\nContent-Usage: /a search=y\n"
	runUsage(t, []usageCase{
		{"conflict: any n wins", conflict, "x", "/a/b", "train-ai", true, robots.PrefDisallow, 3},
		{"conflict: y over unknown, first line", conflict, "x", "/a/b", "search", true, robots.PrefAllow, 3},
		{"shorter rule does not apply", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a search=y\n",
			"x", "/a", "train-ai", true, robots.PrefUnknown, 0},
		{"a path matches with more octets than no path", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: / train-ai=y\n",
			"x", "/b", "train-ai", true, robots.PrefAllow, 3},
		{"equal length, different patterns, both match", "User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab train-ai=n\n",
			"x", "/abc", "train-ai", true, robots.PrefDisallow, 3},
		{"wildcards and end anchor", "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /*.pdf$ train-ai=n\n",
			"x", "/doc/a.pdf", "train-ai", true, robots.PrefDisallow, 3},
		{"end anchor not matching", "User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /*.pdf$ train-ai=n\n",
			"x", "/doc/a.pdf?x", "train-ai", true, robots.PrefAllow, 2},
		{"percent-encoding normalised on both sides", "User-agent: *\nContent-Usage: /%7Euser/ train-ai=n\n",
			"x", "/~user/x", "train-ai", true, robots.PrefDisallow, 2},
		{"tab separates path and preference", "User-agent: *\nContent-Usage:\t/a\t\ttrain-ai=n\n",
			"x", "/a", "train-ai", true, robots.PrefDisallow, 2},
		{"comment ends the value", "User-agent: *\nContent-Usage: /a train-ai=n # search=y\n",
			"x", "/a", "search", true, robots.PrefUnknown, 0},
		{"parse failure is unknown and still the longest match", "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a TRAIN-AI=n\n",
			"x", "/a", "train-ai", true, robots.PrefUnknown, 0},
		{"path not starting with / is no path", "User-agent: *\nContent-Usage: *.pdf train-ai=n\n",
			"x", "/a.pdf", "train-ai", true, robots.PrefUnknown, 0},
		{"disallowed path has no preference", "User-agent: *\nDisallow: /p\nContent-Usage: train-ai=y\n",
			"x", "/p/1", "train-ai", false, robots.PrefUnknown, 0},
		{"no group applies", "User-agent: other\nContent-Usage: train-ai=n\n", "x", "/", "train-ai", true, robots.PrefUnknown, 0},
		{"before the first group applies to none", "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n",
			"x", "/", "train-ai", true, robots.PrefUnknown, 0},
		{"merged groups pool their rules", "User-agent: a\nContent-Usage: train-ai=y\n\nUser-agent: b\nDisallow: /z\n\nUser-agent: a\nContent-Usage: search=n\n",
			"a", "/", "search", true, robots.PrefDisallow, 8},
		{"only the token's groups apply", twoGroups, "a", "/x", "train-ai", true, robots.PrefAllow, 3},
		{"robots.txt is allowed and has preferences", "User-agent: *\nDisallow: /\nContent-Usage: search=y\n",
			"x", "/robots.txt", "search", true, robots.PrefAllow, 3},
	})
	u := robots.Parse([]byte(twoGroups)).Usage("/x", "a", "b")
	if got := u.Get("train-ai"); got.Pref != robots.PrefDisallow || got.Line != 7 {
		t.Errorf("two tokens, both groups: got %s line %d, want n line 7", got.Pref, got.Line)
	}
}

// TestUsageDoesNotEndGroup checks that a Content-Usage line between
// user-agent lines leaves them in one group (RFC 9309 2.2.4).
func TestUsageDoesNotEndGroup(t *testing.T) {
	body := "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n"
	r := robots.Parse([]byte(body))
	if r.NumGroups() != 1 {
		t.Fatalf("got %d groups, want 1\nbody:\n%s", r.NumGroups(), body)
	}
	for _, agent := range []string{"a", "b"} {
		u := r.Usage("/y", agent)
		if got := u.Get("train-ai"); got.Pref != robots.PrefDisallow || got.Line != 2 {
			t.Errorf("%s /y: got %s line %d, want n line 2", agent, got.Pref, got.Line)
		}
		if r.Test("/x", agent).Allowed {
			t.Errorf("%s /x allowed, want disallowed", agent)
		}
	}
}

func TestUsageRulesList(t *testing.T) {
	r := robots.Parse([]byte("User-agent: *\nContent-Usage: /a%7e\ttrain-ai=n # c\nContent-Usage: /a~ search=y\nContent-Usage: /b x=y\n"))
	got := r.Usage("/a~/1", "x").Rules()
	want := []robots.UsageRule{
		{Line: 2, Path: "/a%7e", Pattern: "/a~", Statement: robots.ParseStatement("train-ai=n"), Value: "/a%7e\ttrain-ai=n"},
		{Line: 3, Path: "/a~", Pattern: "/a~", Statement: robots.ParseStatement("search=y"), Value: "/a~ search=y"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Rules:\n got %+v\nwant %+v", got, want)
	}
	if got[0].Text() != "Content-Usage: /a%7e\ttrain-ai=n" {
		t.Errorf("Text: got %q", got[0].Text())
	}
	if rs := r.Usage("/c", "x").Rules(); rs != nil {
		t.Errorf("no rule matches /c: got %+v", rs)
	}
	recs := r.Records()
	if len(recs) != 3 || recs[0] != (robots.Record{Key: "content-usage", Value: "/a%7e\ttrain-ai=n", Line: 2, Group: 0}) {
		t.Errorf("Records: got %+v", recs)
	}
}

func TestUsageLimit(t *testing.T) {
	body := "User-agent: a\nAllow: /q\nContent-Usage: /1 train-ai=n\nContent-Usage: /2 train-ai=n\nContent-Usage: /3 train-ai=n\nDisallow: /z\n" +
		"User-agent: b\nAllow: /\nContent-Usage: /4 train-ai=n\nContent-Usage: /5 train-ai=n\n"
	r := robots.Options{MaxRulesPerGroup: 2}.Parse([]byte(body))
	if r.Limited != 1 {
		t.Errorf("Limited: got %d, want 1", r.Limited)
	}
	if got := r.Usage("/3", "a").Get("train-ai"); got.Pref != robots.PrefUnknown {
		t.Errorf("the rule past the limit applied: %+v", got)
	}
	if got := r.Usage("/2", "a").Get("train-ai"); got.Pref != robots.PrefDisallow {
		t.Errorf("a rule within the limit was dropped: %+v", got)
	}
	if r.Test("/z", "a").Allowed {
		t.Errorf("Content-Usage lines must count apart from rules: a lost its disallow")
	}
	if got := r.Usage("/5", "b").Get("train-ai"); got.Pref != robots.PrefDisallow {
		t.Errorf("the count must restart with each group: b lost its second rule: %+v", got)
	}
}

func TestUsageNoAlloc(t *testing.T) {
	plain := robots.Parse([]byte(rfcSimple))
	with := robots.Parse([]byte(attachExample + "User-agent: *\nContent-Usage: /ai-ok/ search=y\n"))
	allocs := testing.AllocsPerRun(100, func() {
		_ = plain.Usage("/example/page.html", "FooBot").Get("train-ai")
		u := with.Usage("/ai-ok/x", "OtherBot")
		if u.Get("train-ai").Pref != robots.PrefAllow || u.Get("search").Pref != robots.PrefAllow {
			panic("wrong preference")
		}
	})
	if allocs != 0 {
		t.Errorf("Usage allocated %.1f times per run, want 0", allocs)
	}
}

// TestUsageManyTies checks rules past the four kept inline.
func TestUsageManyTies(t *testing.T) {
	body := "User-agent: *\n" + strings.Repeat("Content-Usage: /a train-ai=y\n", 6) + "Content-Usage: /a train-ai=n\n"
	u := robots.Parse([]byte(body)).Usage("/a", "x")
	if got := u.Get("train-ai"); got.Pref != robots.PrefDisallow || got.Line != 8 || len(u.Rules()) != 7 {
		t.Errorf("got %+v with %d rules, want n line 8 with 7 rules", got, len(u.Rules()))
	}
}

// TestHasUsageRecords: HasContentUsage, HasContentSignal and
// HasCrawlDelay say whether a file has any record of each kind, in a group
// or (Content-Signal) before the first.
func TestHasUsageRecords(t *testing.T) {
	tests := []struct {
		body                 string
		usage, signal, delay bool
	}{
		{"User-agent: *\nDisallow: /x\nCrawl-delay: 2\n", false, false, true},
		{"User-agent: *\nDisallow: /x\nRequest-rate: 1/5s\n", false, false, true},
		{"Crawl-delay: 2\nUser-agent: *\nDisallow: /x\n", false, false, false},
		{"User-agent: *\nContent-Usage: train-ai=n\n", true, false, false},
		{"User-agent: *\nContent-Signal: search=yes, ai-train=no\n", false, true, false},
		{"Content-Signal: ai-train=no\nUser-agent: *\nContent-Usage: /a train-ai=n\n", true, true, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		r := robots.Parse([]byte(tt.body))
		if r.HasContentUsage() != tt.usage || r.HasContentSignal() != tt.signal || r.HasCrawlDelay() != tt.delay {
			t.Errorf("%q: HasContentUsage %v, HasContentSignal %v, HasCrawlDelay %v; want %v, %v, %v",
				tt.body, r.HasContentUsage(), r.HasContentSignal(), r.HasCrawlDelay(), tt.usage, tt.signal, tt.delay)
		}
	}
}
