package policy_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// namedCrawlers are the real robots.txt files of testdata/robots whose
// user-agent lines name crawlers by names that are not RFC 9309 product
// tokens (digits, dots, "'"), each with a
// real User-Agent of one of those crawlers (testdata/agents, or the
// crawler's published header) and what its named group decides. The proxy,
// check and audit verify all decide through identity and DecideAccess, as
// the test does.
var namedCrawlers = []struct {
	file, ua   string
	path       string
	agent      string // the group that applies (robots.Verdict.Agent)
	allowed    bool
	crawlDelay time.Duration
}{
	{"aacc.org.txt", "Xenu Link Sleuth/1.3.8", "/education", "xenu", false, 0}, // "Xenu's" names it by its product token, as RFC 9309 reads it
	{"321webmaster.com.txt", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "/contact.php", "mj12bot", true, 20 * time.Second},
	{"en.wiktionary.org.txt", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "/wiki/robot", "mj12bot", false, 0},
	{"en.wiktionary.org.txt", "sitecheck.internetseer.com (For more info see: http://sitecheck.internetseer.com)", "/wiki/robot", "sitecheck.internetseer.com", false, 0},
	{"encore.org.txt", "MJ12bot/v1.2.0 (http://majestic12.co.uk/bot.php?+)", "/", "mj12bot", false, 0},
	{"marca.com.txt", "Mozilla/5.0 (compatible; MJ12bot/v1.4.7; http://www.majestic12.co.uk/bot.php?+)", "/futbol/", "mj12bot", false, 0},
	{"marca.com.txt", "bl.uk_lddc_bot/3.4.0-20220727 (+https://www.bl.uk/legal-deposit-web-archiving)", "/futbol/", "bl.uk_lddc_bot", false, 0},
	{"marca.com.txt", "crawler4j (https://github.com/yasserg/crawler4j/)", "/futbol/", "crawler4j", false, 0},
	{"marca.com.txt", "Mozilla/5.0 (compatible; NerdByNature.Bot; http://www.nerdbynature.net/bot)", "/futbol/", "nerdbynature.bot", false, 0},
	{"milanuncios.com.txt", "sitecheck.internetseer.com (For more info see: http://sitecheck.internetseer.com)", "/anuncios/", "sitecheck.internetseer.com", false, 0},
	{"taobao.com.txt", "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider", "/article/x", "360spider", true, 0},
	{"www.biorxiv.org.txt", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "/content/early", "mj12bot", false, 0},
	{"www.brainyquote.com.txt", "larbin_2.6.2 (larbin@correa.org)", "/quotes/", "larbin", false, 0}, // the crawler catalogue's name, first; its "larbin_2.6.2" groups apply too
	{"www.ebsco.com.txt", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "/", "mj12bot", false, 0},
	{"www.nature.com.txt", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:72.0) Gecko/20100101 Firefox/72.0 (compatible; img2dataset; +https://github.com/rom1504/img2dataset)", "/articles/x", "img2dataset", false, 0},
	{"www.researchsquare.com.txt", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:72.0) Gecko/20100101 Firefox/72.0 (compatible; img2dataset; +https://github.com/rom1504/img2dataset)", "/article/x", "img2dataset", false, 0},
}

// TestNamedCrawlersInTheCorpus: a crawler whose name has digits or dots
// is decided by the group that names it (the name rule,
// robots.IsAgentName), in every corpus file that names one by a name that
// is not a product token.
func TestNamedCrawlersInTheCorpus(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	covered := map[string]bool{}
	for _, tt := range namedCrawlers {
		covered[tt.file] = true
		t.Run(tt.file+" "+tt.agent, func(t *testing.T) {
			r := parseCorpusFile(t, tt.file)
			a := &policy.Access{Result: policy.Successful, Status: 200, Robots: r}
			d := policy.DecideAccess(a, tt.path, id.Identify(tt.ua).Candidates)
			if d.Verdict.Agent != tt.agent || d.Verdict.Fallback || d.Allowed != tt.allowed {
				t.Errorf("%s: UA %q, %s: got group %q (fallback %v) allowed %v, want group %q allowed %v",
					tt.file, tt.ua, tt.path, d.Verdict.Agent, d.Verdict.Fallback, d.Allowed, tt.agent, tt.allowed)
			}
			if d.HasCrawlDelay != (tt.crawlDelay > 0) || d.CrawlDelay != tt.crawlDelay {
				t.Errorf("%s: UA %q: crawl-delay %v (%v), want %v", tt.file, tt.ua, d.CrawlDelay, d.HasCrawlDelay, tt.crawlDelay)
			}
			fallback := policy.DecideAccess(a, tt.path, nil)
			if fallback.Allowed == d.Allowed && fallback.CrawlDelay == d.CrawlDelay {
				t.Errorf("%s: %s is decided the same under \"*\": the case does not show the named group", tt.file, tt.path)
			}
		})
	}
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "robots"))
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, e := range entries {
		if namesBeyondProductTokens(parseCorpusFile(t, e.Name())) {
			named++
			if !covered[e.Name()] {
				t.Errorf("%s names a crawler by a name that is not a product token, and namedCrawlers has no case for it", e.Name())
			}
		}
	}
	t.Logf("%d of %d corpus files name crawlers by names that are not product tokens", named, len(entries))
	if named != len(covered) {
		t.Errorf("%d corpus files name crawlers by names that are not product tokens, namedCrawlers covers %d files", named, len(covered))
	}
}

// namesBeyondProductTokens reports whether a user-agent line of r names
// a crawler by a name that is not an RFC 9309 product token.
func namesBeyondProductTokens(r *robots.Robots) bool {
	for _, g := range r.Groups() {
		for _, a := range g.Agents {
			if a != "" && a != "*" && !robots.IsProductToken(a) {
				return true
			}
		}
	}
	return false
}

func parseCorpusFile(t *testing.T, name string) *robots.Robots {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "robots", name))
	if err != nil {
		t.Fatalf("read corpus file (testdata/robots ships with the repository): %v", err)
	}
	return robots.Parse(body)
}
