package identity_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestCatalogueNamesTheCrawler: real crawler headers whose products alone
// name no crawler, or the wrong one, are identified by the catalogue's
// name, and a site that names the crawler as sites write it in robots.txt
// disallows it. Each header is an instance of crawler-user-agents.
func TestCatalogueNamesTheCrawler(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	tests := []struct {
		ua, token string
		line      string // the user-agent line of a group that disallows it
		client    identity.Client
	}{
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "Slurp", "Slurp", identity.ClientCrawler},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp China; http://misc.yahoo.com.cn/help.html)", "Slurp", "Slurp", identity.ClientCrawler},
		{"Mozilla/5.0 (compatible; Speedy Spider; http://www.entireweb.com/about/search_tech/speedy_spider/)", "Speedy", "Speedy Spider", identity.ClientCrawler},
		{"Mozilla/5.0 (compatible; woriobot +http://worio.com)", "woriobot", "woriobot", identity.ClientCrawler},
		{"Mozilla/5.0 (Windows NT 6.1; rv:38.0) Gecko/20100101 Firefox/38.0 (IndeedBot 1.1)", "IndeedBot", "IndeedBot", identity.ClientCrawler},
		{"Mozilla/5.0+(compatible;+PiplBot;+http://www.pipl.com/bot/)", "PiplBot", "PiplBot", identity.ClientCrawler},
		{"Mozilla/5.0 (compatible; Twingly Recon; twingly.com)", "Twingly", "Twingly Recon", identity.ClientCrawler},
		{"Mozilla/5.0 (compatible; Google-Structured-Data-Testing-Tool +https://search.google.com/structured-data/testing-tool)",
			"Google-Structured-Data-Testing-Tool", "Google-Structured-Data-Testing-Tool", identity.ClientCrawler},
		{"Mozilla/4.5 (compatible; HTTrack 3.0x; Windows 98)", "HTTrack", "HTTrack 3.0", identity.ClientOther},
		{"Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.7.12; ips-agent) Gecko/20050922 Fedora/1.0.7-1.1.fc4 Firefox/1.0.7", "ips-agent", "ips-agent", identity.ClientCrawler},
		{"SAMSUNG-SGH-E250/1.0 Profile/MIDP-2.0 Configuration/CLDC-1.1 UP.Browser/6.2.3.3.c.1.101 (GUI) MMP/2.0 (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)",
			"Googlebot-Mobile", "Googlebot-Mobile", identity.ClientCrawler},
		{"DoCoMo/2.0 N905i(c100;TB;W24H16) (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)", "Googlebot-Mobile", "Googlebot-Mobile", identity.ClientCrawler},
		{"Nokia6820/2.0 (4.83) Profile/MIDP-1.0 Configuration/CLDC-1.0 (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)", "Googlebot-Mobile", "Googlebot-Mobile", identity.ClientCrawler},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			got := id.Identify(tt.ua)
			if got.Token != tt.token {
				t.Errorf("Identify(%q): got token %q (candidates %q, source %s), want %q", tt.ua, got.Token, got.Candidates, got.Source, tt.token)
			}
			if r := id.Recognise(tt.ua); r.Client != tt.client || r.Known() == nil {
				t.Errorf("Recognise(%q): got client %s, known %v; want %s and the catalogue's entry", tt.ua, r.Client, r.Known() != nil, tt.client)
			}
			r := robots.Parse([]byte("User-agent: *\nAllow: /\n\nUser-agent: " + tt.line + "\nDisallow: /\n"))
			if v := r.Test("/page", got.Candidates...); v.Allowed || v.Fallback {
				t.Errorf("User-agent: %s / Disallow: / for %q (candidates %q): got allowed %v, group %q; want disallowed by that group",
					tt.line, tt.ua, got.Candidates, v.Allowed, v.Agent)
			}
		})
	}
}

// plainName returns the name a crawler-user-agents pattern is, when it is
// a plain name (no regexp syntax but escaped punctuation, and a name a
// user-agent line can name whole: robots.IsAgentName), else "".
func plainName(pattern string) string {
	s := regexp.MustCompile(`\\([^A-Za-z0-9])`).ReplaceAllString(pattern, "$1")
	if s != regexp.QuoteMeta(s) && strings.ContainsAny(pattern, "[]()|*+?^${}") || !robots.IsAgentName(s) {
		return ""
	}
	return s
}

// plainNameExceptions are the instances of plain-name patterns that
// "User-agent: NAME" / "Disallow: /" does not disallow, with why.
var plainNameExceptions = map[string]string{
	"Mozilla/5.0 (compatible; Alexabot/1.0; +http://www.alexa.com/help/certifyscan; certifyscan@alexa.com)": "the pattern exabot matches inside another crawler's name, Alexabot",
	"Mozilla/5.0 (compatible; Whoiswebsitebot/0.1; +http://www.whoiswebsite.net)":                           "the pattern sitebot matches inside another crawler's name, Whoiswebsitebot",
	"Mozilla/5.0 (compatible; RankSonicSiteAuditor/1.0; +https://ranksonic.com/ranksonic_sab.html)":         "the pattern Sonic matches inside another crawler's name, RankSonicSiteAuditor",
	"Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.142 Mobile Safari/537.36 Instagram 406.0.0.58.159 Android (35/15; 480dpi; 1080x2400; OPPO; CPH2557; OP573DL1; mt6833; en_MY; 822918295; IABMV/1) NV/1": "the pattern AP3A.240617.008 is an Android build number that real phones send, left out of the catalogue (catalogue.File.Left)",
}

// TestPlainNamesDisallow: for every instance of crawler-user-agents whose
// pattern is a plain name that appears in it, a robots.txt file of
// "User-agent: NAME" / "Disallow: /" disallows it (at least 99%; the
// rest are plainNameExceptions).
func TestPlainNamesDisallow(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	total, disallowed := 0, 0
	for _, e := range testkit.CrawlerUserAgents(t, corpusDir()) {
		name := plainName(e.Pattern)
		if name == "" {
			continue
		}
		r := robots.Parse([]byte("User-agent: " + name + "\nDisallow: /\n"))
		for _, ua := range e.Instances {
			if !strings.Contains(ua, name) {
				continue
			}
			total++
			got := id.Identify(ua)
			v := r.Test("/", got.Candidates...)
			_, excused := plainNameExceptions[ua]
			switch {
			case !v.Allowed:
				disallowed++
				if excused {
					t.Errorf("%q is disallowed by User-agent: %s: remove it from plainNameExceptions", ua, name)
				}
			case !excused:
				t.Errorf("User-agent: %s / Disallow: / allows %q (candidates %q)", name, ua, got.Candidates)
			}
		}
	}
	pct := 100 * float64(disallowed) / float64(total)
	t.Logf("%d of %d instances of plain-name patterns (%.2f%%) disallowed by User-agent: NAME", disallowed, total, pct)
	if total < 1000 || pct < 99 {
		t.Errorf("got %d of %d (%.2f%%), want at least 1000 instances and 99%%", disallowed, total, pct)
	}
}
