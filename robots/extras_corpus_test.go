package robots_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// extrasKinds are the records TestExtrasCorpus counts, in report order.
var extrasKinds = []string{"crawl-delay", "request-rate", "sitemap", "content-usage", "content-signal"}

// recordOK reports whether the value of a record of one of extrasKinds
// parses; sitemaps are checked by the caller.
func recordOK(key, value string) bool {
	switch key {
	case "crawl-delay":
		_, ok := robots.ParseCrawlDelay(value)
		return ok
	case "request-rate":
		_, ok := robots.ParseRequestRate(value)
		return ok
	case "content-usage":
		return robots.ParseUsageRule(value).Statement.Valid()
	case "content-signal":
		_, ok := robots.ParseContentSignal(value)
		return ok
	}
	return true
}

// TestExtrasCorpus reports how many corpus files carry each record of
// extrasKinds and how many of those have a line of that record that does
// not parse; and checks that every valid crawl-delay and Content-Signal of
// a group reaches Extras for that group's first product token.
func TestExtrasCorpus(t *testing.T) {
	dir := filepath.Join(corpusDir(), "robots")
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) == 0 {
		t.Fatalf("no robots.txt files in %s (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it)", dir)
	}
	carry, fail := map[string]int{}, map[string]int{}
	for _, name := range names {
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r := robots.Parse(body)
		has, bad := map[string]bool{}, map[string]bool{}
		for _, rec := range r.Records() {
			has[rec.Key] = true
			if !recordOK(rec.Key, rec.Value) {
				bad[rec.Key] = true
			}
			checkReaches(t, filepath.Base(name), r, rec)
		}
		if s := r.Sitemaps(); len(s) > 0 {
			has["sitemap"] = true
			urls := r.SitemapURLs()
			for _, v := range s {
				bad["sitemap"] = bad["sitemap"] || !slices.Contains(urls, v)
			}
		}
		for _, k := range extrasKinds {
			if has[k] {
				carry[k]++
			}
			if bad[k] {
				fail[k]++
			}
		}
	}
	for _, k := range extrasKinds {
		t.Logf("extras corpus: %s: %d of %d files carry it, %d of them with a line that does not parse", k, carry[k], len(names), fail[k])
		// Both corpora (testdata/robots and the larger one) hold real files
		// with every record but Content-Usage, which no real file has yet.
		if carry[k] == 0 && k != "content-usage" {
			t.Errorf("no corpus file carries %s: the corpus no longer covers it", k)
		}
	}
}

// checkReaches checks that a valid crawl-delay or Content-Signal record of
// a group shows in Extras for the group's first product token.
func checkReaches(t *testing.T, file string, r *robots.Robots, rec robots.Record) {
	t.Helper()
	if rec.Key != "crawl-delay" && rec.Key != "content-signal" || rec.Group < 0 || !recordOK(rec.Key, rec.Value) {
		return
	}
	agent := r.Group(rec.Group).Agents[0]
	if agent == "" {
		return // an empty product token names no crawler
	}
	e := r.Extras(agent)
	switch rec.Key {
	case "crawl-delay":
		want, _ := robots.ParseCrawlDelay(rec.Value)
		if got, ok := e.CrawlDelay(); !ok || got < want {
			t.Errorf("%s line %d: %q: Extras(%q) crawl-delay %v %v, want at least %v", file, rec.Line, rec.Value, agent, got, ok, want)
		}
	case "content-signal":
		sigs, _ := robots.ParseContentSignal(rec.Value)
		for _, s := range sigs {
			if _, ok := e.ContentSignal(s.Key); !ok {
				t.Errorf("%s line %d: Extras(%q) lacks signal %q", file, rec.Line, agent, s.Key)
			}
		}
	}
}
