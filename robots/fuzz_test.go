package robots_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// corpusDir is the shared corpus: $ROBOTSPROXY_CORPUS or ../shared/corpus
// from the repository root.
func corpusDir() string {
	if d := os.Getenv("ROBOTSPROXY_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus")
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
// matcher: no panic, and the verdict is consistent with what it reports.
func FuzzParse(f *testing.F) {
	for _, s := range []string{rfcSimple, rfcLongest, "user-agent: *\ndisallow: /*a*a*a*b$\n", "\xEF\xBBuser-agent a\rdisallow /%zz\r\n"} {
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
	})
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
