package robots

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzEdits checks that a rule value is rebuilt exactly from its normalised
// pattern and edits, and that the pattern is normalizePattern's.
func FuzzEdits(f *testing.F) {
	for _, s := range []string{"/a", "/a$b$", "/%7e%7E%2f%2F%zz%", "/ツ* x\x00\x7f", "%41%4a%4A%6A", "$", "%", "%2", "/%e3%83%84"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		pat, edits := appendPattern(nil, nil, v)
		if string(pat) != normalizePattern(v) {
			t.Fatalf("%q: pattern %q, normalizePattern %q", v, pat, normalizePattern(v))
		}
		if got := denormalize(string(pat), string(edits)); got != v {
			t.Fatalf("%q: rebuilt as %q (pattern %q, edits %x)", v, got, pat, edits)
		}
	})
}

// TestRuleTextCorpus checks Rule.Text and Rule.AppendText against every
// rule line of the corpus: the value as written, after the canonical key.
func TestRuleTextCorpus(t *testing.T) {
	dir := os.Getenv("ROBOTSPROXY_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "testdata")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "robots", "*.txt"))
	if len(files) == 0 {
		t.Fatalf("no robots.txt files in %s (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it)", filepath.Join(dir, "robots"))
	}
	var rules int
	for _, name := range files {
		body, err := os.ReadFile(name)
		if err != nil || len(body) > DefaultMaxBytes {
			continue
		}
		r := Parse(body)
		lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(bridgeEncoding(body, "")), "\r\n", "\n"), "\r", "\n"), "\n")
		for _, g := range r.Groups() {
			for _, rule := range g.Rules {
				rules++
				line := lines[rule.Line-1]
				if rule.Line == 1 {
					line = string(stripBOM([]byte(line)))
				}
				line, _, _ = strings.Cut(line, "#")
				line = trimWS(line)
				k, _, value := splitRecord(line)
				key := map[keyKind]string{keyAllow: "Allow", keyDisallow: "Disallow"}[k]
				want := key + ": " + value
				if value == "" {
					want = key + ":"
				}
				if got := rule.Text(); got != want {
					t.Errorf("%s line %d: Text() = %q, want %q", filepath.Base(name), rule.Line, got, want)
				}
				if got := string(rule.AppendText([]byte("x"))); got != "x"+want {
					t.Errorf("%s line %d: AppendText(\"x\") = %q, want %q", filepath.Base(name), rule.Line, got, "x"+want)
				}
			}
		}
	}
	t.Logf("%d rules", rules)
}

func TestDecode(t *testing.T) {
	body := "Sitemap: http://x/1.xml\nhost: before\nUser-Agent: FooBot\nuser-agent: *\nUSER-AGENT: FOOBOT\nuser-agent: /x\n" +
		"crawl-delay: 5\ndisallow: /a\n\nallow: /b%7e$\nX-Other: v\nuser-agent: barbot\nsitemap: http://x/2.xml\nuser-agent: FooBot\n"
	r := Parse([]byte(body))
	want := []Group{
		{Agents: []string{"FooBot", "*", "FOOBOT", ""}, Line: 3, Rules: []Rule{
			{Allow: false, Pattern: "/a", Line: 8},
			{Allow: true, Pattern: "/b~$", Line: 10, edits: "\x05\x02"},
		}},
		{Agents: []string{"barbot", "FooBot"}, Line: 12},
	}
	if got := r.Groups(); !reflect.DeepEqual(got, want) {
		t.Errorf("Groups:\n got %+v\nwant %+v", got, want)
	}
	if r.NumGroups() != 2 || !reflect.DeepEqual(r.Group(1), want[1]) {
		t.Errorf("NumGroups %d, Group(1) %+v", r.NumGroups(), r.Group(1))
	}
	if got := r.Group(0).Rules[1].Text(); got != "Allow: /b%7e$" {
		t.Errorf("Text: %q", got)
	}
	recs := []Record{{"host", "before", 2, -1}, {"crawl-delay", "5", 7, 0}, {"x-other", "v", 11, 0}}
	if got := r.Records(); !reflect.DeepEqual(got, recs) {
		t.Errorf("Records: got %+v, want %+v", got, recs)
	}
	if got := r.Sitemaps(); !reflect.DeepEqual(got, []string{"http://x/1.xml", "http://x/2.xml"}) {
		t.Errorf("Sitemaps: %q", got)
	}
	v := r.Test("/a/x", "foobot")
	if v.Agent != "foobot" || !reflect.DeepEqual(v.Groups(), []int{0, 1}) || v.Rule.Line != 8 {
		t.Errorf("Test: %+v groups %v", v, v.Groups())
	}
	if !r.HasGroup("FOOBOT") || !r.HasGroup("*") || r.HasGroup("") || r.HasGroup("bazbot") {
		t.Errorf("HasGroup")
	}
}

// TestBucketed checks bucketed programs (see compile.go) against the
// reference on ties across buckets, lines over 255 apart and edits.
func TestBucketed(t *testing.T) {
	body := "user-agent: *\n" +
		"disallow: /*x\nallow: /ax\ndisallow: /bx\nallow: /a*\ndisallow: /ab\nallow: /ab\n" +
		strings.Repeat("# pad\n", 300) +
		"disallow: /c%7e\nallow: /*\ndisallow: /cd\ndisallow: *\nallow: /\ndisallow: /$\n"
	r := Parse([]byte(body))
	if r.a[0]&1 == 0 {
		t.Fatalf("the group's program is not bucketed")
	}
	groups := refParseInternal(body)
	for _, path := range []string{"/", "/ax", "/bx", "/ab", "/abx", "/c~", "/cd", "/zz", "/x"} {
		v := r.Test(path, "bot")
		allowed, line := groups(path)
		if v.Allowed != allowed || v.Rule.Line != line {
			t.Errorf("%s: got allowed=%v line=%d, want allowed=%v line=%d", path, v.Allowed, v.Rule.Line, allowed, line)
		}
		if v.Rule.Line == 308 && v.Rule.Text() != "Disallow: /c%7e" {
			t.Errorf("%s: Text %q", path, v.Rule.Text())
		}
	}
	rules := r.Group(0).Rules
	for i := 1; i < len(rules); i++ {
		if rules[i].Line <= rules[i-1].Line {
			t.Errorf("Group(0).Rules not in file order: %+v", rules)
		}
	}
}

// refParseInternal is a tiny brute-force matcher for TestBucketed: every
// rule of the single group, longest match, allow on ties, then file order.
func refParseInternal(body string) func(path string) (bool, int) {
	type rule struct {
		allow bool
		pat   string
		line  int
	}
	var rules []rule
	for i, l := range strings.Split(body, "\n") {
		k, _, v := splitRecord(trimWS(l))
		if (k == keyAllow || k == keyDisallow) && v != "" {
			rules = append(rules, rule{k == keyAllow, normalizePattern(v), i + 1})
		}
	}
	return func(path string) (bool, int) {
		path = NormalizePath(path)
		var best *rule
		for i := range rules {
			r := &rules[i]
			if !matchWild(r.pat, path) {
				continue
			}
			if best == nil || len(r.pat) > len(best.pat) || len(r.pat) == len(best.pat) && r.allow && !best.allow {
				best = r
			}
		}
		if best == nil {
			return true, 0
		}
		return best.allow, best.line
	}
}
