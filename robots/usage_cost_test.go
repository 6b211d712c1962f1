package robots_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/robots"
)

// manyTies is a group of n Content-Usage lines that all tie: 19,000 of them
// make a file of about 494 KB, within the default parse limits.
func manyTies(n int) []byte {
	return []byte("User-agent: *\n" + strings.Repeat("Content-Usage: train-ai=n\n", n))
}

// allocBytes returns the octets f allocates per call, averaged over n
// calls.
func allocBytes(n int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

func TestUsageRuleOf(t *testing.T) {
	body := "User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a search=n\nContent-Usage: /a\ttrain-ai=n # c\n" +
		strings.Repeat("Content-Usage: /a train-ai=y\n", 5)
	r := robots.Parse([]byte(body))
	u := r.Usage("/a", "x")
	tests := []struct {
		label string
		ok    bool
		want  string // the rule's Text
		line  int
	}{
		{"train-ai", true, "Content-Usage: /a\ttrain-ai=n", 4},
		{"search", true, "Content-Usage: /a search=n", 3},
		{"other", false, "", 0},
	}
	for _, tt := range tests {
		p := u.Get(tt.label)
		rule, ok := u.RuleOf(p)
		if ok != tt.ok || rule.Text() != tt.want && ok || rule.Line != tt.line || p.Line != tt.line {
			t.Errorf("%s: got %q line %d ok %v (pref line %d), want %q line %d ok %v",
				tt.label, rule.Text(), rule.Line, ok, p.Line, tt.want, tt.line, tt.ok)
		}
		if ok && rule.Pattern != "/a" || ok && rule.Statement.Pref(tt.label) != p.Pref {
			t.Errorf("%s: got pattern %q, statement %q: want /a and %s", tt.label, rule.Pattern, rule.Statement, p.Pref)
		}
	}
	// A preference from other UsagePrefs, or made up, names no rule of u.
	other := robots.Parse([]byte("User-agent: *\nContent-Usage: /a train-ai=n\n")).Usage("/a", "x").Get("train-ai")
	for name, p := range map[string]robots.UsagePref{"other file": other, "zero": {}, "made up": {Label: "train-ai", Pref: robots.PrefDisallow, Line: 4}} {
		if rule, ok := u.RuleOf(p); ok {
			t.Errorf("%s: got rule %+v, want none", name, rule)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = u.RuleOf(u.Get("train-ai")) }); allocs != 0 {
		t.Errorf("RuleOf allocated %.1f times per run, want 0", allocs)
	}
}

// TestUsageFileLimit checks MaxContentUsageRules: the first 1024
// Content-Usage lines in groups are kept, across groups, the rest dropped
// and counted in Limited.
func TestUsageFileLimit(t *testing.T) {
	max := robots.MaxContentUsageRules
	tests := []struct {
		name    string
		body    string
		path    string
		limited int
		rules   int
		pref    robots.Pref
		line    int
	}{
		{"at the limit", "User-agent: *\n" + strings.Repeat("Content-Usage: train-ai=y\n", max-1) + "Content-Usage: train-ai=n\n",
			"/", 0, max, robots.PrefDisallow, max + 1},
		{"past the limit, dropped", "User-agent: *\n" + strings.Repeat("Content-Usage: train-ai=y\n", max) + "Content-Usage: train-ai=n\nContent-Usage: /p train-ai=n\n",
			"/p", 2, max, robots.PrefAllow, 2},
		{"counted across merged groups", strings.Repeat("User-agent: *\nAllow: /\n"+strings.Repeat("Content-Usage: train-ai=y\n", max/2+1), 2),
			"/", 2, max, robots.PrefAllow, 3},
		{"across groups of other agents", "User-agent: other\nAllow: /\n" + strings.Repeat("Content-Usage: train-ai=y\n", max) + "User-agent: *\nContent-Usage: train-ai=n\n",
			"/", 1, 0, robots.PrefUnknown, 0},
		{"lines before the first group do not count", strings.Repeat("Content-Usage: train-ai=y\n", 2*max) + "User-agent: *\nContent-Usage: train-ai=n\n",
			"/", 0, 1, robots.PrefDisallow, 2*max + 2},
		{"19,000 tied lines", string(manyTies(19000)), "/", 19000 - max, max, robots.PrefDisallow, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := robots.Parse([]byte(tt.body))
			u := r.Usage(tt.path, "x")
			got := u.Get("train-ai")
			if r.Limited != tt.limited || len(u.Rules()) != tt.rules || got.Pref != tt.pref || got.Line != tt.line {
				t.Errorf("got Limited %d, %d rules, %s line %d; want Limited %d, %d rules, %s line %d",
					r.Limited, len(u.Rules()), got.Pref, got.Line, tt.limited, tt.rules, tt.pref, tt.line)
			}
		})
	}
}

// TestUsageManyTiesBounded bounds what one request's reading of 19,000
// tied Content-Usage lines allocates: Usage, two labels and the rule that
// decided.
func TestUsageManyTiesBounded(t *testing.T) {
	r := robots.Parse(manyTies(19000))
	const limit = 32 << 10
	got := allocBytes(20, func() {
		u := r.Usage("/a", "bot")
		_, _ = u.RuleOf(u.Get("train-ai"))
		_ = u.Get("search")
	})
	if got > limit {
		t.Errorf("got %d B per request, want at most %d", got, limit)
	}
}

// BenchmarkUsageManyTies measures one request's reading of a file of
// 19,000 tied Content-Usage lines: Usage, the preferences of the
// vocabulary's two labels, and the rules.
func BenchmarkUsageManyTies(b *testing.B) {
	r := robots.Parse(manyTies(19000))
	b.Run("Usage", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = r.Usage("/a", "bot")
		}
	})
	u := r.Usage("/a", "bot")
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = u.Get("train-ai"), u.Get("search")
		}
	})
	b.Run("Rules", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = u.Rules()
		}
	})
	p := u.Get("train-ai")
	b.Run("RuleOf", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := u.RuleOf(p); !ok {
				b.Fatal("no rule")
			}
		}
	})
}

// FuzzUsageRuleOf checks Get against the statements of Rules, parsed
// again (Get reads the vocabulary's labels from what Parse stored), that
// RuleOf names the rule that decided, and that no more than
// MaxContentUsageRules rules apply.
func FuzzUsageRuleOf(f *testing.F) {
	f.Add([]byte(attachExample), "/ai-ok/x", "x")
	f.Add([]byte("User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a search=n;p, x=y\nContent-Usage: /a* train-ai=n, train-ai=?1\n"), "/a", "x")
	f.Fuzz(func(t *testing.T, body []byte, path, token string) {
		u := robots.Parse(body).Usage(path, token)
		rules := u.Rules()
		if len(rules) > robots.MaxContentUsageRules {
			t.Fatalf("%d rules apply, want at most %d", len(rules), robots.MaxContentUsageRules)
		}
		for _, label := range append(robots.VocabLabels(), "x") {
			want := robots.UsagePref{Label: label}
			for _, r := range rules { // vocab-07 5.1: any n, else the first y
				if p := r.Statement.Pref(label); p == robots.PrefDisallow && want.Pref != p || p == robots.PrefAllow && want.Pref == robots.PrefUnknown {
					want.Pref, want.Line = p, r.Line
				}
			}
			p := u.Get(label)
			if p.Pref != want.Pref || p.Line != want.Line {
				t.Fatalf("%s: got %s line %d, want %s line %d from %+v", label, p.Pref, p.Line, want.Pref, want.Line, rules)
			}
			rule, ok := u.RuleOf(p)
			if ok != (p.Pref != robots.PrefUnknown) {
				t.Fatalf("%s: %+v gave rule %v", label, p, ok)
			}
			if ok && (rule.Line != p.Line || rule.Statement.Pref(label) != p.Pref || !slices.Contains(rules, rule)) {
				t.Fatalf("%s: %+v gave rule %+v, not one of %+v stating it", label, p, rule, rules)
			}
		}
	})
}

// tiedStatements is a group of n Content-Usage lines that tie, each with the
// statement st.
func tiedStatements(n int, st string) *robots.Robots {
	return robots.Parse([]byte("User-agent: *\n" + strings.Repeat("Content-Usage: "+st+"\n", n)))
}

// fastest returns the least time, over several tries, that f takes for n
// calls: the least is the one the other tests on the machine disturbed least.
func fastest(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for try := 0; try < 7; try++ {
		start := time.Now()
		for i := 0; i < n; i++ {
			f()
		}
		best = min(best, time.Since(start))
	}
	return best
}

// TestUsageCostIndependentOfStatements: reading the vocabulary's labels
// costs the same for 1024 tied rules whose statements are ~480 octets (a
// file of ~500 KB) as for short ones, since Parse read each statement once.
func TestUsageCostIndependentOfStatements(t *testing.T) {
	n := robots.MaxContentUsageRules
	short := tiedStatements(n, "train-ai=y").Usage("/", "x")
	long := tiedStatements(n, strings.Repeat("x=1, ", 94)+"train-ai=y").Usage("/", "x")
	if long.Get("train-ai").Pref != robots.PrefAllow || len(long.Rules()) != n {
		t.Fatalf("the long file has %d rules and %s, want %d and y", len(long.Rules()), long.Get("train-ai").Pref, n)
	}
	read := func(u robots.UsagePrefs) func() {
		return func() { _, _ = u.Get("train-ai"), u.Get("search") }
	}
	s, l := fastest(20, read(short)), fastest(20, read(long))
	t.Logf("short statements %v, long %v per 20 requests", s, l)
	if l > 4*s {
		t.Errorf("got %v for long statements, %v for short: want at most 4 times", l, s)
	}
}

// BenchmarkUsageLongStatements measures Usage and the vocabulary's two
// labels on 1024 tied rules of ~480 octets (a file of ~500 KB).
func BenchmarkUsageLongStatements(b *testing.B) {
	r := tiedStatements(1024, strings.Repeat("x=1, ", 94)+"train-ai=y")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		u := r.Usage("/", "x")
		_, _ = u.Get("train-ai"), u.Get("search")
	}
}
