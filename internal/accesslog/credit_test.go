package accesslog

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// corpusLog writes a Combined Log Format line per User-Agent header, each
// a request for /private/N a day into the history below.
func corpusLog(uas []string) string {
	var b strings.Builder
	for i, ua := range uas {
		b.WriteString(line("2026-11-05T00:00:00Z", "192.0.2.1", "/private/"+strconv.Itoa(i), strings.ReplaceAll(ua, `"`, `\"`)))
	}
	return b.String()
}

// TestNamedBrowsersAreNotAccused: the browsers that a real Apache log of
// 2015 (elastic/examples' apache_logs) and uap-core's corpus show, which
// a fixed list of browser names left to be judged (Iceweasel, Midori,
// chromeframe, ELinks, Epiphany, Thunderbird, "Ubuntu Chromium", Amazon
// Silk, QQBrowser, Puffin, Oculus Browser, Android's browser,
// baidubrowser), give no finding on a site that disallows everything.
func TestNamedBrowsersAreNotAccused(t *testing.T) {
	uas := []string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:20.0) Gecko/20100101 Firefox/20.0 Iceweasel/20.0",
		"Midori/0.2 (X11; Linux; U; fr-fr) WebKit/531.2+",
		"Mozilla/5.0 (X11; Linux; rv:2.0.1) Gecko/20100101 Firefox/4.0.1 Midori/0.4",
		"Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; WOW64; Trident/5.0; chromeframe/19.0.1084.52)",
		"ELinks (0.4.3; NetBSD 3.0.2_PATCH sparc64; 141x19)",
		"Mozilla/5.0 (X11; U; SunOS sun4u; en-US; rv:1.7.5) Gecko/20050105 Epiphany/1.4.8",
		"Mozilla/5.0 (X11; Linux x86_64; rv:24.0) Gecko/20100101 Thunderbird/24.2.0 Lightning/2.6.4",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/32.0.1700.102 Chrome/32.0.1700.102 Safari/537.36",
		"Mozilla/5.0 (Linux; U; en-us; KFAPWI Build/JDQ39) AppleWebKit/535.19 (KHTML, like Gecko) Silk/3.13 Safari/535.19 Silk-Accelerated=true",
		"Mozilla/5.0 (Windows NT 5.1) AppleWebKit/535.11 (KHTML, like Gecko) Chrome/17.0.963.15 Safari/535.11 QQBrowser/6.13.13719.201",
		"Mozilla/5.0 (Linux; U; Android 2.2.1; es-us) AppleWebKit/534.12 (KHTML, like Gecko) Puffin/1.3.2913S Mobile Safari/534.12",
		"Mozilla/5.0 (X11; Linux x86_64; Quest 2) AppleWebKit/537.36 (KHTML, like Gecko) OculusBrowser/26.2.0.0.10 SamsungBrowser/4.0 Chrome/110.0.5481.192 VR Safari/537.36",
		"Mozilla/5.0 (Linux; U; Android 2.2.2; en-gb; HTC Desire Build/FRG83G) AppleWebKit/533.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/533.1",
		"Mozilla/5.0 (Windows; U; Windows NT 6.1; zh_CN) AppleWebKit/534.7 (KHTML, like Gecko) Chrome/7.0 baidubrowser/1.x Safari/534.7",
	}
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /\n"})
	r := judgeLog(t, h, corpusLog(uas))
	for _, f := range r.Violations {
		t.Errorf("browser judged as %q: %q", f.ProductToken, f.UserAgent)
	}
	if r.Summary.Requests != int64(len(uas)) {
		t.Errorf("%d requests read, want %d", r.Summary.Requests, len(uas))
	}
}

// TestCreditGoesToTheCrawlerNotTheDevice: a crawler whose header starts
// with a phone's product is credited to the crawler, and checked against
// the ranges of its operator: Googlebot-Mobile from Google's address is
// verified, from elsewhere an impostor.
func TestCreditGoesToTheCrawlerNotTheDevice(t *testing.T) {
	uas := []string{
		"SAMSUNG-SGH-E250/1.0 Profile/MIDP-2.0 Configuration/CLDC-1.1 UP.Browser/6.2.3.3.c.1.101 (GUI) MMP/2.0 (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)",
		"DoCoMo/2.0 N905i(c100;TB;W24H16) (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)",
	}
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: *\nDisallow: /private/\n"})
	a, err := New(Options{History: h, Verifier: &Verifier{Ranges: map[string][]netip.Prefix{"googlebot": {netip.MustParsePrefix("66.249.64.0/19")}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	log := line("2026-11-05T00:00:00Z", "66.249.73.1", "/private/a", uas[0]) + line("2026-11-05T00:00:01Z", "66.249.73.2", "/private/b", uas[1]) +
		line("2026-11-05T00:00:02Z", "203.0.113.9", "/private/c", uas[0])
	if err := a.Read(context.Background(), "x.log", strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Result(0)
	if err := r.Load(); err != nil {
		t.Fatal(err)
	}
	if len(r.Crawlers) != 1 || r.Crawlers[0].Token != "Googlebot-Mobile" || r.Crawlers[0].Verified != 2 || r.Crawlers[0].Impostor != 1 {
		t.Fatalf("crawlers %+v, want Googlebot-Mobile only: 2 verified, 1 impostor", r.Crawlers)
	}
	for _, f := range append(r.Violations, r.Impostors...) {
		if f.ProductToken != "Googlebot-Mobile" {
			t.Errorf("finding credited to %q, want Googlebot-Mobile: %q", f.ProductToken, f.UserAgent)
		}
	}
	if len(r.Violations) != 2 || len(r.Impostors) != 1 {
		t.Errorf("%d violations, %d impostors; want 2 and 1", len(r.Violations), len(r.Impostors))
	}
}

// TestCreditGoesToTheCandidateTheSiteNames: a header the catalogue does
// not know, whose first product is a device's, is credited to the
// candidate that the robots.txt in force names.
func TestCreditGoesToTheCandidateTheSiteNames(t *testing.T) {
	h := historyDir(t, map[string]string{"2026-11-01T00:00:00Z.txt": "User-agent: Zyxel\nDisallow: /\n\nUser-agent: *\nAllow: /\n"})
	r := judgeLog(t, h, line("2026-11-05T00:00:00Z", "192.0.2.1", "/a", "Nokia6230/2.0 (compatible; Zyxel/1.0)"))
	if len(r.Violations) != 1 || r.Violations[0].ProductToken != "Zyxel" {
		t.Errorf("violations %+v; want one, credited to Zyxel", r.Violations)
	}
}
