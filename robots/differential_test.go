package robots_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// differ compares the package with the reference on one input and returns
// a description of the difference, or "".
func differ(body []byte, groups []refGroup, r *robots.Robots, path, token string) string {
	wantAllowed, wantLine := refTest(groups, path, token)
	v := r.Test(path, token)
	line := v.Rule.Line // 0 when no rule matched
	if v.Allowed == wantAllowed && line == wantLine {
		return ""
	}
	return strings.Join([]string{
		"token " + quote(token) + " path " + quote(path),
		"got allowed=" + boolStr(v.Allowed) + " line=" + itoa(line),
		"reference allowed=" + boolStr(wantAllowed) + " line=" + itoa(wantLine),
	}, ": ")
}

// asciiOnly reports whether s is ASCII; RFC 9309 product tokens are, and
// fuzzed tokens are kept to them.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzDifferential feeds random bodies, product tokens and paths to the
// package and to the reference matcher and fails on any difference in the
// verdict or the deciding rule's line.
func FuzzDifferential(f *testing.F) {
	seeds := []string{rfcSimple, rfcLongest, "user-agent: a\ndisallow: /a*b$\nallow: /a%2A\n", "user-agent: *\ndisallow: /%7e$x\nallow: /~\n",
		"user-agent: *\ndisallow: /gr\xf6\xdfe\nallow: /gr\xf6*\xe9$ # \xe9\ndisallow: /gr%F6\n"}
	for _, s := range seeds {
		f.Add([]byte(s), "/example/page.html", "foobot")
	}
	f.Add([]byte("user-agent: MJ12bot/1.4\ndisallow: /\nuser-agent: omgili.com\nuser-agent: +http\nallow: /x\n"), "/x", "MJ12bot")
	addCorpusSeeds(f, 60, func(b []byte) {
		f.Add(b, "/search?q=1", "Googlebot")
		f.Add(b, "/", "*")
	})
	f.Fuzz(func(t *testing.T, body []byte, path, token string) {
		if len(body) > 16<<10 || !asciiOnly(token) {
			return
		}
		if d := differ(body, refParse(body), robots.Parse(body), path, token); d != "" {
			t.Fatalf("%s\nbody:\n%q", d, body)
		}
	})
}

// TestDifferentialCorpus runs the package and the reference over every
// corpus file, for paths derived from each file's own rules and several
// product tokens.
func TestDifferentialCorpus(t *testing.T) {
	dir := filepath.Join(corpusDir(), "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("cannot read %s (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it): %v", dir, err)
	}
	if testing.Short() {
		entries = entries[:len(entries)/10]
	}
	tokens := []string{"Googlebot", "bingbot", "GPTBot", "*", "ExampleBot", "Mozilla", "MJ12bot", "MJ", "360Spider", "img2dataset", "larbin_2.6.2"}
	var files, checks, diffs int
	for _, e := range entries {
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(body) > robots.DefaultMaxBytes {
			continue // the reference has no parse limit
		}
		files++
		groups, r := refParse(body), robots.Parse(body)
		for _, path := range append(derivePaths(r), rawTwinPaths(groups)...) {
			for _, tok := range tokens {
				checks++
				if d := differ(body, groups, r, path, tok); d != "" {
					diffs++
					if diffs <= 20 {
						t.Errorf("%s: %s", e.Name(), d)
					}
				}
			}
		}
	}
	t.Logf("differential: %d files, %d checks, %d differences", files, checks, diffs)
}

// rawTwinPaths returns paths for the reference's raw readings of bridged
// rule lines (the second rule of a line), so that the corpus checks them
// whatever the package makes of them.
func rawTwinPaths(groups []refGroup) []string {
	var out []string
	for _, g := range groups {
		for i, rule := range g.rules {
			if i == 0 || g.rules[i-1].line != rule.line {
				continue
			}
			p := rule.pattern
			if j := strings.IndexAny(p, "*$"); j >= 0 {
				p = p[:j]
			}
			out = append(out, p, p+"x.html", strings.ToLower(p)+"/y")
		}
	}
	return out
}

// derivePaths returns paths that exercise a file's rules: each pattern's
// literal prefix, with and without a suffix, plus a few fixed paths.
func derivePaths(r *robots.Robots) []string {
	set := map[string]bool{"/": true, "/robots.txt": true, "/index.html": true, "/a%2Fb?x=%41": true}
	for _, g := range r.Groups() {
		for _, rule := range g.Rules {
			p := rule.Pattern
			if i := strings.IndexAny(p, "*$"); i >= 0 {
				p = p[:i]
			}
			if p == "" {
				p = "/"
			}
			set[p] = true
			set[p+"x.html"] = true
			set[p+"/y?q=1"] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) > 100 {
		out = out[:100]
	}
	return out
}
