// Package crawlers_test drives real Go crawlers through package enforce
// (github.com/robotsproxy/robotsproxy/enforce) and compares what they were
// let fetch with the verdicts of "robotsproxy check" (package check).
package crawlers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/robotsproxy/robotsproxy/enforce"
	"github.com/robotsproxy/robotsproxy/internal/check"
)

// corpus returns the robots.txt files to crawl: real sites' files, those
// of $ROBOTSPROXY_CORPUS/robots when it is set (a larger corpus of the
// same layout, as the root module's corpus tests take), else the project's
// testdata/robots.
func corpus() string {
	if dir := os.Getenv("ROBOTSPROXY_CORPUS"); dir != "" {
		return filepath.Join(dir, "robots", "*.txt")
	}
	return "../testdata/robots/*.txt"
}

// genericAgent is a crawler no corpus file names: the * group decides.
const genericAgent = "CorpusCrawler/1.0 (+https://example.test/crawler)"

// maxPaths bounds the paths derived from one file.
const maxPaths = 40

// TestCollyAgreesWithCheck serves every corpus file as the robots.txt of
// an origin of its own, crawls paths derived from its rules with Colly
// through enforce.Transport (for the * group, and for the first crawler
// the file names), and requires each request's outcome (fetched, or
// refused by robotsproxy) to be check's verdict for that URL and crawler.
func TestCollyAgreesWithCheck(t *testing.T) {
	files, err := filepath.Glob(corpus())
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files at %s (%v)", corpus(), err)
	}
	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n")) // the origins are on 127.0.0.1
	if err != nil {
		t.Fatal(err)
	}
	tr, err := enforce.New(enforce.Options{Config: cfg, Audit: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var urls, allowed, differ int
	for _, file := range files {
		robots, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		origin := newOrigin(t, robots)
		paths := derivePaths(robots)
		for _, agent := range agents(robots) {
			got := crawl(t, tr, agent, origin.URL, paths)
			want := verdicts(t, file, agent, keys(got))
			for u, ok := range got {
				urls++
				if ok {
					allowed++
				}
				if ok != want[u] {
					differ++
					t.Errorf("%s, %q, %s: enforce let Colly fetch it: %v; check allows it: %v",
						filepath.Base(file), agent, u, ok, want[u])
				}
			}
		}
	}
	t.Logf("%d corpus files, %d URLs crawled with Colly, %d fetched, %d refused, %d differences from check",
		len(files), urls, allowed, urls-allowed, differ)
	if allowed == 0 || allowed == urls {
		t.Errorf("%d of %d URLs allowed: the derived paths do not exercise both verdicts", allowed, urls)
	}
}

// newOrigin serves robots as /robots.txt and a short page at every other
// path.
func newOrigin(t *testing.T, robots []byte) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write(robots)
			return
		}
		io.WriteString(w, "page\n")
	}))
	t.Cleanup(s.Close)
	return s
}

// crawl visits base+path for each path with a Colly collector whose
// transport is tr, and returns, by the URL Colly sent, whether the origin
// answered (true) or robotsproxy refused (false). Any other outcome fails
// the test.
func crawl(t *testing.T, tr http.RoundTripper, agent, base string, paths []string) map[string]bool {
	t.Helper()
	c := colly.NewCollector(colly.UserAgent(agent), colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8}); err != nil {
		t.Fatal(err)
	}
	c.WithTransport(tr)
	var mu sync.Mutex
	got := map[string]bool{}
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		got[r.Request.URL.String()] = true
	})
	c.OnError(func(r *colly.Response, err error) {
		if _, refused := enforce.Refusal(&http.Response{Header: *r.Headers}); !refused || r.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d %v: neither fetched nor refused by robotsproxy", r.Request.URL, r.StatusCode, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got[r.Request.URL.String()] = false
	})
	for _, p := range paths {
		_ = c.Visit(base + p) // an error: Colly sent nothing (a path it rewrote onto one it had visited)
	}
	c.Wait()
	return got
}

// verdicts runs check on the robots.txt file for agent and urls, and
// returns whether it allows each URL.
func verdicts(t *testing.T, file, agent string, urls []string) map[string]bool {
	t.Helper()
	var out bytes.Buffer
	if _, err := check.Run(file, agent, urls, check.Options{JSON: true, Stdout: &out}); err != nil {
		t.Fatalf("check %s: %v", file, err)
	}
	want := map[string]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r check.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check %s: %v", file, err)
		}
		want[r.URL] = r.Allowed
	}
	if len(want) != len(urls) {
		t.Fatalf("check %s: %d verdicts for %d URLs", file, len(want), len(urls))
	}
	return want
}

func keys(m map[string]bool) []string {
	k := make([]string, 0, len(m))
	for u := range m {
		k = append(k, u)
	}
	slices.Sort(k)
	return k
}

// token is a product token a test can name (RFC 9309 2.2.1).
var token = regexp.MustCompile(`^[A-Za-z_-]+$`)

// agents returns the crawlers to crawl a file as: one it does not name,
// and the first it names by a product token, if any.
func agents(robots []byte) []string {
	a := []string{genericAgent}
	for _, v := range values(robots, "user-agent") {
		if token.MatchString(v) {
			return append(a, v+"/1.0")
		}
	}
	return a
}

// derivePaths returns paths around each allow and disallow rule of a
// file, in file order, at most maxPaths: the rule's path, one longer, its
// parent, with "*" taken as "x" and a final "$" dropped; and "/".
func derivePaths(robots []byte) []string {
	paths := []string{"/"}
	add := func(p string) {
		if strings.HasPrefix(p, "/") && !slices.Contains(paths, p) && len(paths) < maxPaths {
			paths = append(paths, p)
		}
	}
	for _, v := range append(values(robots, "disallow"), values(robots, "allow")...) {
		v = strings.ReplaceAll(strings.TrimSuffix(v, "$"), "*", "x")
		add(v)
		add(v + "z")
		if i := strings.LastIndex(strings.TrimSuffix(v, "/"), "/"); i >= 0 {
			add(v[:i+1])
		}
	}
	return paths
}

// values returns the values of a file's lines whose key is key, comments
// and surrounding white space removed (RFC 9309 2.2).
func values(robots []byte, key string) []string {
	var vs []string
	for _, line := range strings.Split(string(robots), "\n") {
		line, _, _ = strings.Cut(line, "#")
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			if v = strings.TrimSpace(v); v != "" {
				vs = append(vs, v)
			}
		}
	}
	return vs
}
