package robots_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/robots"
)

// corpusDir is the real-world corpus (robots/ and agents/ folders): the
// larger one at $ROBOTSPROXY_CORPUS, or the repository's testdata.
func corpusDir() string {
	if d := os.Getenv("ROBOTSPROXY_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "testdata")
}

// addCorpusSeeds adds up to n real robots.txt bodies as fuzz seeds.
func addCorpusSeeds(f *testing.F, n int, add func(body []byte)) {
	dir := filepath.Join(corpusDir(), "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Logf("no corpus seeds (%v); using the built-in seeds only", err)
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	step := max(1, len(names)/n)
	for i := 0; i < len(names); i += step {
		body, err := os.ReadFile(filepath.Join(dir, names[i]))
		if err == nil && len(body) <= 64<<10 {
			add(body)
		}
	}
}

// FuzzParse feeds arbitrary bodies, paths and tokens to the parser and
// matcher: no panic, and the verdict is consistent with what it reports;
// so are the other records (checkExtras).
func FuzzParse(f *testing.F) {
	for _, s := range []string{rfcSimple, rfcLongest, "user-agent: *\ndisallow: /*a*a*a*b$\n", "\xEF\xBBuser-agent a\rdisallow /%zz\r\n",
		attachExample, cloudflareManaged, contentSignalsOrg,
		"user-agent: foobot\ncrawl-delay: 1.5\nrequest-rate: 10/1m 0500-2059\ncontent-usage: /example/ train-ai=n;p, search=y\ncontent-signal: search=no\n"} {
		f.Add([]byte(s), "/example/page.html", "foobot")
	}
	addCorpusSeeds(f, 40, func(b []byte) { f.Add(b, "/search?q=1", "Googlebot") })
	f.Fuzz(func(t *testing.T, body []byte, path, token string) {
		r := robots.Parse(body)
		v := r.Test(path, token)
		lines := strings.Count(string(body), "\n") + strings.Count(string(body), "\r") + 1
		if v.Matched() {
			if v.Allowed != v.Rule.Allow {
				t.Fatalf("verdict allowed=%v but deciding rule %q is allow=%v", v.Allowed, v.Rule.Text(), v.Rule.Allow)
			}
			if v.Rule.Line < 1 || v.Rule.Line > lines {
				t.Fatalf("rule line %d outside 1..%d", v.Rule.Line, lines)
			}
			if v.Rule.Pattern == "" {
				t.Fatalf("an empty pattern decided")
			}
		} else if !v.Allowed {
			t.Fatalf("disallowed without a deciding rule")
		}
		if v.Implicit && !v.Allowed {
			t.Fatalf("/robots.txt disallowed")
		}
		if again := r.Test(robots.NormalizePath(path), token); again.Allowed != v.Allowed || again.Rule != v.Rule {
			t.Fatalf("testing the normalised path changed the verdict")
		}
		checkExtras(t, r, v, path, token, lines)
	})
}

// checkExtras checks Extras and Usage against the verdict v of Test for
// the same path and token, on a file of the given number of lines.
func checkExtras(t *testing.T, r *robots.Robots, v robots.Verdict, path, token string, lines int) {
	inFile := func(line int) bool { return line >= 1 && line <= lines }
	e := r.Extras(token)
	if e.Agent != v.Agent || e.Fallback != v.Fallback {
		t.Fatalf("Extras agent %q fallback %v, Test %q %v", e.Agent, e.Fallback, v.Agent, v.Fallback)
	}
	if d, ok := e.CrawlDelay(); ok != inFile(e.CrawlDelayLine()) || d < 0 || !ok && d != 0 {
		t.Fatalf("crawl-delay %v %v line %d", d, ok, e.CrawlDelayLine())
	}
	if rr, ok := e.RequestRate(); ok != inFile(rr.Line) || ok && (rr.Requests < 1 || rr.Period < time.Second || rr.Interval() <= 0) {
		t.Fatalf("request-rate %+v %v", rr, ok)
	}
	for k, s := range e.ContentSignals() {
		if again, ok := e.ContentSignal(k); !ok || again != s || !inFile(s.Line) || s.Key != k {
			t.Fatalf("content-signal %q: %+v, again %+v %v", k, s, again, ok)
		}
	}
	u := r.Usage(path, token)
	if u.Verdict.Allowed != v.Allowed || u.Verdict.Rule != v.Rule {
		t.Fatalf("Usage verdict %+v, Test %+v", u.Verdict, v)
	}
	rules := u.Rules()
	if !v.Allowed && rules != nil {
		t.Fatalf("rules %+v apply to a disallowed path", rules)
	}
	for _, rule := range rules {
		if !inFile(rule.Line) || len(rule.Pattern) != len(rules[0].Pattern) {
			t.Fatalf("rule %+v of %+v", rule, rules)
		}
	}
	for _, label := range robots.VocabLabels() {
		p := u.Get(label)
		if p.Pref == robots.PrefUnknown && p.Line != 0 || p.Pref != robots.PrefUnknown && (!inFile(p.Line) || rules == nil) {
			t.Fatalf("%s: %+v with rules %+v", label, p, rules)
		}
	}
}

// FuzzNormalizePath checks that normalisation is idempotent and that its
// output holds only printable ASCII with well-formed, upper-case escapes.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"/", "/foo/bar/%62%61%7A", "/ツ", "/%", "/%zz%4", "/a*b$", "/a b\x00\xff", "http://x/y?z#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := robots.NormalizePath(robots.PathOf(in))
		if again := robots.NormalizePath(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		for i := 0; i < len(out); i++ {
			c := out[i]
			if c <= 0x20 || c >= 0x7F || c == '*' || c == '$' {
				t.Fatalf("%q -> %q: octet %#x at %d must be encoded", in, out, c, i)
			}
			if c == '%' {
				if i+2 >= len(out) || !isUpperHex(out[i+1]) || !isUpperHex(out[i+2]) {
					t.Fatalf("%q -> %q: malformed escape at %d", in, out, i)
				}
			}
		}
		if !strings.HasPrefix(out, "/") {
			t.Fatalf("%q -> %q: does not start with /", in, out)
		}
	})
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }
