package accesslog

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

var testdata = filepath.Join("..", "..", "testdata")

// TestCrawlerInstancesAreJudgedAndCredited: every real crawler header of
// crawler-user-agents, on a site whose robots.txt disallows /private/ to
// all, is judged (at least 95%), and the finding names the crawler: one
// of the names the catalogue gives its entry, or the text its pattern
// matches in the header.
func TestCrawlerInstancesAreJudgedAndCredited(t *testing.T) {
	entries := testkit.CrawlerUserAgents(t, testdata)
	var uas []string
	owner := map[int]int{} // instance → entry
	for i, e := range entries {
		for _, ua := range e.Instances {
			owner[len(uas)] = i
			uas = append(uas, ua)
		}
	}
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /private/\n"})
	r := judgeLog(t, h, corpusLog(uas))
	a, _ := New(Options{History: h})
	defer a.Close()
	cat := a.ident.Catalogue()
	judged, credited := 0, 0
	for _, f := range r.Violations {
		judged++
		var n int
		fmt.Sscanf(f.Path, "/private/%d", &n)
		e := entries[owner[n]]
		if ownName(cat.File.Entries, e.Pattern, f.UserAgent, f.ProductToken) {
			credited++
		} else {
			t.Logf("credited to %q, not to %s: %q", f.ProductToken, e.Pattern, f.UserAgent)
		}
	}
	jp, cp := 100*float64(judged)/float64(len(uas)), 100*float64(credited)/float64(len(uas))
	t.Logf("%d crawler headers: %d judged (%.2f%%), %d credited to the crawler's own name (%.2f%%); %d browsers, %d naming no product",
		len(uas), judged, jp, credited, cp, r.Summary.Browsers, r.Summary.Unnamed)
	if jp < 95 || cp < 95 {
		t.Errorf("judged %.2f%%, credited %.2f%%: want at least 95%% each", jp, cp)
	}
}

// ownName reports whether token is the crawler's own name, not a device
// or platform product of its header: a name or term of the catalogue's
// entry with pattern, text that pattern matches in ua, a name of the same
// family as that text (its first four letters: YandexImages for
// "yandex.com/bots", grub-client for "grub.org"), or a name that declares
// a bot (adidxbot for "bingbot", which its header names in a URL).
func ownName(entries []catalogue.Entry, pattern, ua, token string) bool {
	for i := range entries {
		if e := &entries[i]; e.Pattern == pattern && slices.ContainsFunc(append(slices.Clip(e.Names), e.Terms...), func(n string) bool { return strings.EqualFold(n, token) }) {
			return true
		}
	}
	lower := strings.ToLower(token)
	if strings.Contains(lower, "bot") || strings.Contains(lower, "crawl") || strings.Contains(lower, "spider") {
		return true
	}
	loc := regexp.MustCompile(pattern).FindStringIndex(ua)
	if loc == nil {
		return false
	}
	if m := strings.ToLower(ua[loc[0]:loc[1]]); len(m) >= 4 && len(lower) >= 4 && lower[:4] == m[:4] {
		return true
	}
	return testkit.Overlaps(ua, token, loc)
}

// TestBrowsersAreNeverJudged: the real browser headers of uap-core's
// browser families and of ua-parser-js's fixtures (testdata/agents), on a
// site that disallows everything to all, give no finding, but for the
// few that ua-parser's data names no family for
// (testkit.UnnamedBrowsers).
func TestBrowsersAreNeverJudged(t *testing.T) {
	for name, cases := range map[string][]testkit.BrowserCase{
		"uap-core":     testkit.RealBrowsers(t, testdata),
		"ua-parser-js": testkit.UAParserJSBrowsers(t, testdata),
	} {
		var uas []string
		for _, c := range cases {
			uas = append(uas, c.UA)
		}
		h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /\n"})
		r := judgeLog(t, h, corpusLog(uas))
		judged := map[string]bool{}
		for _, f := range r.Violations {
			judged[f.UserAgent] = true
			if _, ok := testkit.UnnamedBrowsers[f.UserAgent]; !ok {
				t.Errorf("%s: browser judged as %s %q: %q", name, f.Class, f.ProductToken, f.UserAgent)
			}
		}
		t.Logf("%s: %d browser headers: %d browsers, %d naming no product, %d judged (no family in ua-parser's data)", name, len(uas), r.Summary.Browsers, r.Summary.Unnamed, len(judged))
		if len(uas) < 300 || r.Summary.Requests != int64(len(uas)) {
			t.Errorf("%s: %d browser headers, %d requests read: want at least 300, all read", name, len(uas), r.Summary.Requests)
		}
	}
}

// TestCrawlerRowsSayWhatTheCatalogueKnows: a crawler's row carries what
// the crawler catalogue says of it, ai.robots.txt's operator included.
func TestCrawlerRowsSayWhatTheCatalogueKnows(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /private/\n"})
	r := judgeLog(t, h, line("2026-11-05T00:00:00Z", "192.0.2.1", "/a",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"))
	if len(r.Crawlers) != 1 || r.Crawlers[0].Catalogue == nil || !strings.Contains(r.Crawlers[0].Catalogue.Operator, "OpenAI") {
		t.Errorf("crawlers %+v: want GPTBot with its catalogue entry, operated by OpenAI", r.Crawlers)
	}
}
