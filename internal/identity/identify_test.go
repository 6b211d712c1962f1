package identity_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Real User-Agent headers used by several tests.
const (
	uaExampleBot     = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"
	uaGooglebot      = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaGooglebotPlain = "Googlebot/2.1 (+http://www.google.com/bot.html)"
	uaGooglebotEvg   = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/120.0.6099.129 Safari/537.36"
	uaGooglebotPhone = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.129 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaBingbot        = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36"
	uaCurl           = "curl/8.5.0"
	uaChromeWindows  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
	uaFirefoxLinux   = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
	uaSafariIPhone   = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1"
	uaEdgeWindows    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91"
)

func TestProductNames(t *testing.T) {
	tests := []struct {
		ua   string
		want []string
	}{
		{"", nil},
		{uaCurl, []string{"curl"}},
		{"ExampleBot", []string{"ExampleBot"}},
		{"ExampleBot/", []string{"ExampleBot"}},
		{uaExampleBot, []string{"Mozilla", "ExampleBot"}},
		{uaBingbot, []string{"Mozilla", "AppleWebKit", "bingbot", "Chrome", "Safari"}},
		{uaGooglebotPlain, []string{"Googlebot"}},
		{uaChromeWindows, []string{"Mozilla", "AppleWebKit", "Chrome", "Safari"}},
		// Words without a version inside comments are not products.
		{"Foo/1.0 (compatible; Bar; Baz/2)", []string{"Foo", "Bar", "Baz"}},
		{"Foo/1.0 (Linux; Bar; Baz/2)", []string{"Foo", "Baz"}},
		{"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)", []string{"Mozilla"}},
		{"Mozilla/5.0 (compatible;PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", []string{"Mozilla", "PetalBot"}},
		// Nested comments: the inner products are found, the outer comment
		// ends at its own ")".
		{"Foo/1 (a (Bar/2) Baz/3) Qux/4", []string{"Foo", "Bar", "Baz", "Qux"}},
		{"Foo/1 (a (b (c Deep/9)))", []string{"Foo", "Deep"}},
		{"Foo/1 (a (b) c) Bare", []string{"Foo", "Bare"}},
		{"Foo/1 (a (b) NotTop) Qux", []string{"Foo", "Qux"}},
		// Unterminated comments run to the end of the header.
		{"Foo/1 (compatible; Bar/2", []string{"Foo", "Bar"}},
		{"Foo/1 (a (Bar/2)", []string{"Foo", "Bar"}},
		// A quoted pair does not close the comment: "y" stays inside it.
		{`Foo/1 (x \) y) Baz/3`, []string{"Foo", "Baz"}},
		{`Foo/1 (x \( y) Baz/3`, []string{"Foo", "Baz"}},
		// Stray closing parentheses and separators are skipped.
		{"Foo/1 ) Bar/2", []string{"Foo", "Bar"}},
		{"  Foo/1\t;Bar/2  ", []string{"Foo", "Bar"}},
		// URLs in comments are not products; a URL's scheme is none.
		{"Foo/1 (+http://example.com/bot; https://x/y)", []string{"Foo"}},
		{"Foo/1 https://linko.app/crawler", []string{"Foo", "linko.app"}},
	}
	for _, tt := range tests {
		t.Run(tt.ua, func(t *testing.T) {
			if got := identity.ProductNames(tt.ua); !slices.Equal(got, tt.want) {
				t.Errorf("ProductNames(%q): got %q, want %q", tt.ua, got, tt.want)
			}
		})
	}
}

// TestProductNamesMalformed feeds hostile headers to ProductNames and
// Identify: they must not panic and must return only tokens.
func TestProductNamesMalformed(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	inputs := []string{
		"(", ")", "((((", "))))", "()", "(\\", "\\", "(a\\", "Foo/1 (\\",
		"Foo/1 (a\\)", "Foo/1 (((Bar/2", "/", "//", "/1.0", "Foo//1", "(/)",
		"Foo/1 (;;;;)", "(Bar/)", "(/1)", "\x00\xff(\xfe/\x01)", "Bot/1 (ünïcode; Zed/2)",
		strings.Repeat("(", 10000), strings.Repeat("Foo/1 (", 1000),
		strings.Repeat("\\(", 1000),
	}
	for _, ua := range inputs {
		name := ua
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			for _, n := range identity.ProductNames(ua) {
				if n == "" || strings.ContainsFunc(n, func(r rune) bool { return r > 0x7e || !robots.IsTokenChar(byte(r)) }) {
					t.Errorf("ProductNames(%q): got name %q, want an RFC 9110 token", ua, n)
				}
			}
			checkIdentity(t, ua, id.Identify(ua))
		})
	}
}

// checkIdentity checks the invariants of an Identity: Token is the first
// candidate or "*", no browser token is a candidate.
func checkIdentity(t *testing.T, ua string, got identity.Identity) {
	t.Helper()
	switch {
	case len(got.Candidates) == 0 && (got.Token != "*" || got.Source != policy.SourceDefault):
		t.Errorf("Identify(%q): got Token %q Source %q with no candidates, want \"*\" and %q", ua, got.Token, got.Source, policy.SourceDefault)
	case len(got.Candidates) > 0 && got.Token != got.Candidates[0]:
		t.Errorf("Identify(%q): got Token %q, want the first candidate %q", ua, got.Token, got.Candidates[0])
	}
	for _, c := range got.Candidates {
		if !robots.IsAgentName(c) {
			t.Errorf("Identify(%q): got candidate %q among %q, want names of the name rule only (robots.IsAgentName)", ua, c, got.Candidates)
		}
		for _, b := range identity.DefaultBrowserTokens() {
			if strings.EqualFold(c, b) {
				t.Errorf("Identify(%q): got browser token %q among candidates %q, want none", ua, c, got.Candidates)
			}
		}
	}
}

func TestIdentify(t *testing.T) {
	overrides := []identity.Override{
		{Pattern: regexp.MustCompile(`(?i)examplebot`), Token: "override-a"},
		{Pattern: regexp.MustCompile(`Example`), Token: "override-b"},
		{Pattern: regexp.MustCompile(`^$`), Token: "EmptyAgent"},
	}
	std := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	withOverrides := identity.NewIdentifier(identity.DefaultBrowserTokens(), overrides)
	noBrowsers := identity.NewIdentifier(nil, nil)

	tests := []struct {
		name       string
		id         *identity.Identifier
		ua         string
		wantToken  string
		wantCands  []string
		wantSource policy.IdentitySource
	}{
		{"ExampleBot", std, uaExampleBot, "ExampleBot", []string{"ExampleBot"}, policy.SourceUserAgent},
		{"Googlebot compatible", std, uaGooglebot, "Googlebot", []string{"Googlebot"}, policy.SourceUserAgent},
		{"Googlebot plain", std, uaGooglebotPlain, "Googlebot", []string{"Googlebot"}, policy.SourceUserAgent},
		{"Googlebot evergreen", std, uaGooglebotEvg, "Googlebot", []string{"Googlebot"}, policy.SourceUserAgent},
		{"Googlebot smartphone", std, uaGooglebotPhone, "Googlebot", []string{"Googlebot"}, policy.SourceUserAgent},
		{"bingbot", std, uaBingbot, "bingbot", []string{"bingbot"}, policy.SourceUserAgent},
		{"curl", std, uaCurl, "curl", []string{"curl"}, policy.SourceUserAgent},
		{"bare token", std, "ExampleBot", "ExampleBot", []string{"ExampleBot"}, policy.SourceUserAgent},
		{"several bots in order", std, "Mozilla/5.0 (compatible; FooBot/1.0; BarBot/2.0) Baz-Crawler/3", "FooBot", []string{"FooBot", "BarBot", "Baz-Crawler"}, policy.SourceUserAgent},
		{"duplicates folded", std, "Mozilla/5.0 (compatible; ExampleBot/0.1) ExampleBot/0.2 examplebot/3", "ExampleBot", []string{"ExampleBot"}, policy.SourceUserAgent},
		{"browser tokens case-insensitive", std, "MOZILLA/5.0 applewebkit/1 curl/8", "curl", []string{"curl"}, policy.SourceUserAgent},
		{"a URL's host is a name, \"+http\" is not", std, "omgili/0.5 +http://omgili.com", "omgili", []string{"omgili", "omgili.com"}, policy.SourceUserAgent},
		{"dotted name in a comment", std, "Mozilla/5.0 (compatible; Mail.RU_Bot/2.0; ExampleBot/1)", "Mail.RU_Bot", []string{"Mail.RU_Bot", "ExampleBot"}, policy.SourceUserAgent},
		{"a name with digits", std, "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot", []string{"MJ12bot"}, policy.SourceUserAgent},
		{"a name that starts with a digit", std, "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider", "360Spider", []string{"360Spider"}, policy.SourceUserAgent},
		{"a bare name after compatible", std, "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:72.0) Gecko/20100101 Firefox/72.0 (compatible; img2dataset; +https://github.com/rom1504/img2dataset)", "img2dataset", []string{"img2dataset"}, policy.SourceUserAgent},
		{"versions are no names", std, "Instagram 309.0.0.40.113 Android", "Instagram", []string{"Instagram", "Android"}, policy.SourceUserAgent},
		{"empty", std, "", "*", nil, policy.SourceDefault},
		{"only white space", std, "  \t ", "*", nil, policy.SourceDefault},
		{"Chrome on Windows", std, uaChromeWindows, "*", nil, policy.SourceDefault},
		{"Firefox on Linux", std, uaFirefoxLinux, "*", nil, policy.SourceDefault},
		{"Safari on iPhone", std, uaSafariIPhone, "*", nil, policy.SourceDefault},
		{"Edge on Windows", std, uaEdgeWindows, "*", nil, policy.SourceDefault},
		{"no browser list keeps Mozilla, credits the bot", noBrowsers, uaExampleBot, "ExampleBot", []string{"ExampleBot", "Mozilla"}, policy.SourceUserAgent},
		{"override first match wins", withOverrides, uaExampleBot, "override-a", []string{"override-a"}, policy.SourceOverride},
		{"override second pattern", withOverrides, "Example/1.0", "override-b", []string{"override-b"}, policy.SourceOverride},
		{"override is case-sensitive unless asked", withOverrides, "example/1.0", "example", []string{"example"}, policy.SourceUserAgent},
		{"override of an empty header", withOverrides, "", "EmptyAgent", []string{"EmptyAgent"}, policy.SourceOverride},
		{"no override matches", withOverrides, uaBingbot, "bingbot", []string{"bingbot"}, policy.SourceUserAgent},
		{"no override matches browser", withOverrides, uaChromeWindows, "*", nil, policy.SourceDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.id.Identify(tt.ua)
			if got.Token != tt.wantToken || got.Source != tt.wantSource || !slices.Equal(got.Candidates, tt.wantCands) {
				t.Errorf("Identify(%q): got {Token %q, Candidates %q, Source %q}, want {Token %q, Candidates %q, Source %q}",
					tt.ua, got.Token, got.Candidates, got.Source, tt.wantToken, tt.wantCands, tt.wantSource)
			}
			if tt.id != noBrowsers {
				checkIdentity(t, tt.ua, got)
			}
		})
	}
}

// TestIdentifyBrowserTokenNeverMatchesGroup checks that a group naming a
// browser token (a common robots.txt mistake) never applies to a crawler
// that merely carries it for compatibility.
func TestIdentifyBrowserTokenNeverMatchesGroup(t *testing.T) {
	r := robots.Parse([]byte("User-agent: Mozilla\nDisallow: /\n\nUser-agent: ExampleBot\nAllow: /\n"))
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	for _, ua := range []string{
		"Mozilla/5.0 (compatible; ExampleBot/0.1)",
		uaExampleBot,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ExampleBot/0.1) Chrome/120.0.0.0 Safari/537.36",
		"ExampleBot/0.1 Mozilla/5.0",
	} {
		t.Run(ua, func(t *testing.T) {
			ident := id.Identify(ua)
			v := r.Test("/x", ident.Candidates...)
			if !v.Allowed || v.Agent != "examplebot" {
				t.Errorf("Test(/x, %q) for UA %q: got Allowed %v Agent %q, want Allowed true Agent \"examplebot\"", ident.Candidates, ua, v.Allowed, v.Agent)
			}
		})
	}
}

// corpusDir is where the shared real-world corpus lives.
func corpusDir() string {
	if d := os.Getenv("ROBOTSPROXY_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "testdata")
}

// minCorpusMatchPercent is the floor for the share of crawler-user-agents
// instances whose candidates include one matched by the entry's pattern.
// Observed: 1588 of 2116 (75.05%) with the crawler catalogue's names
// (1474, 69.66%, without them), names such as "MJ12bot", "360Spider" and
// "Mail.RU_Bot" included (the name rule, robots.IsAgentName). Most misses
// are patterns written for the whole header ("Googlebot\/",
// "yandex\.com\/bots") rather than for a product name.
const minCorpusMatchPercent = 74.0

// minCorpusOwnPercent is the floor for the share of instances whose primary
// token overlaps the text the entry's pattern matches in the header.
// Observed: 1986 of 2116 (93.86%) with the crawler catalogue's credit
// (1856, 87.71%, without it); most of the rest name a sibling token of the
// same operator (adidxbot for the pattern "bingbot", YandexImages for
// "yandex\.com\/bots").
const minCorpusOwnPercent = 93.0

func TestIdentifyCorpus(t *testing.T) {
	path := filepath.Join(corpusDir(), "agents", "crawler-user-agents", "crawler-user-agents.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read %s (testdata/agents ships with the repository; ROBOTSPROXY_CORPUS overrides it): %v", path, err)
	}
	var entries []struct {
		Pattern   string   `json:"pattern"`
		Instances []string `json:"instances"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	total, matched, none, own := 0, 0, 0, 0
	for _, e := range entries {
		re, err := regexp.Compile("(?i)" + e.Pattern)
		if err != nil {
			t.Errorf("pattern %q: %v", e.Pattern, err)
			continue
		}
		for _, ua := range e.Instances {
			total++
			got := id.Identify(ua)
			checkIdentity(t, ua, got)
			if len(got.Candidates) == 0 {
				none++
			}
			if slices.ContainsFunc(got.Candidates, re.MatchString) {
				matched++
			}
			if len(got.Candidates) > 0 && testkit.Overlaps(ua, got.Token, re.FindStringIndex(ua)) {
				own++
			}
		}
	}
	if total == 0 {
		t.Fatalf("%s: got 0 instances, want some", path)
	}
	pct := 100 * float64(matched) / float64(total)
	t.Logf("corpus %s: %d of %d instances (%.2f%%) yield a candidate matched by their pattern; %d yield no candidate", path, matched, total, pct, none)
	ownPct := 100 * float64(own) / float64(total)
	t.Logf("corpus: the primary token is the text the entry's pattern matches (the crawler's own) in %d of %d instances (%.2f%%)", own, total, ownPct)
	if ownPct < minCorpusOwnPercent {
		t.Errorf("corpus identification: primary token is the crawler's own in %.2f%%, want at least %.2f%%", ownPct, minCorpusOwnPercent)
	}
	if pct < minCorpusMatchPercent {
		t.Errorf("corpus identification: got %d of %d (%.2f%%), want at least %.2f%%", matched, total, pct, minCorpusMatchPercent)
	}
}

// FuzzIdentify checks that no header makes Identify panic or return a
// browser token; go test runs the seeds.
func FuzzIdentify(f *testing.F) {
	for _, s := range []string{"", uaExampleBot, uaBingbot, uaChromeWindows, `Foo/1 (x \) y) Baz/3`, "((((", "Foo/1 (a\\"} {
		f.Add(s)
	}
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	f.Fuzz(func(t *testing.T, ua string) {
		checkIdentity(t, ua, id.Identify(ua))
	})
}

// TestIdentifyMemoSkipsLongUserAgents: a long header is identified every
// time but never kept, so hostile headers cannot fill the memo with
// memoMax × 32 KiB.
func TestIdentifyMemoSkipsLongUserAgents(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	long := "LongBot/1.0 " + strings.Repeat("x", 2000)
	for range 3 {
		if got := id.Identify(long); got.Token != "LongBot" {
			t.Fatalf("Identify(long) = %q, want LongBot", got.Token)
		}
	}
	if n := identity.MemoLen(id); n != 0 {
		t.Errorf("memo holds %d entries after long headers, want 0", n)
	}
	id.Identify("ShortBot/1.0")
	if n := identity.MemoLen(id); n != 1 {
		t.Errorf("memo holds %d entries after a short header, want 1", n)
	}
}
