package proxy_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// namedRobots names four crawlers whose names are not RFC 9309 product
// tokens (the last one unknown to the crawler catalogue), and lets every
// other crawler in.
const namedRobots = "User-agent: MJ12bot\nDisallow: /\n\nUser-agent: 360Spider\nDisallow: /\n\n" +
	"User-agent: img2dataset\nDisallow: /\n\nUser-agent: Zq7bot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"

// TestProxyNameRule: the proxy refuses a crawler whose User-Agent names a
// product that a group names whole (the name rule, robots.IsAgentName),
// before the origin sees it, and its audit line names the group. A longer
// name is another crawler, unless the crawler catalogue recognises the
// named one in it: crawler-user-agents' pattern "MJ12bot" matches
// "MJ12botX".
func TestProxyNameRule(t *testing.T) {
	o := newOrigin(t, serveRobots(namedRobots))
	h := newHarness(t, harnessOptions{})
	cases := []struct {
		ua, token, group string
		want             int
	}{
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot", "mj12bot", 403},
		{"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider", "360Spider", "360spider", 403},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:72.0) Gecko/20100101 Firefox/72.0 (compatible; img2dataset; +https://github.com/rom1504/img2dataset)", "img2dataset", "img2dataset", 403},
		{"Zq7bot/1.0", "Zq7bot", "zq7bot", 403},
		{"Zq7botX/1.0", "Zq7botX", "*", 200},
		{"MJ12botX/1.0", "MJ12botX", "mj12bot", 403},
	}
	for i, c := range cases {
		path := "/page/" + c.token
		resp, _ := h.do(t, "GET", o.URL+path, c.ua, "")
		if resp.StatusCode != c.want || resp.StatusCode == 403 && resp.Header.Get(proxy.HeaderToken) != c.token {
			t.Errorf("%q: got %d token %q, want %d token %q", c.ua, resp.StatusCode, resp.Header.Get(proxy.HeaderToken), c.want, c.token)
		}
		if hits := o.Count(path); (hits == 0) != (c.want == 403) {
			t.Errorf("%q: the origin saw %s %d times", c.ua, path, hits)
		}
		lines := h.audit.WaitLines(t, i+1)
		if len(lines) <= i || lines[i]["group"] != c.group || lines[i]["product_token"] != c.token {
			t.Errorf("%q: audit line %v, want group %q product_token %q", c.ua, lines, c.group, c.token)
		}
	}
}
