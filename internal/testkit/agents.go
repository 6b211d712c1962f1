package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// CrawlerEntry is an entry of testdata/agents/crawler-user-agents: a
// crawler's pattern and real User-Agent headers it matches.
type CrawlerEntry struct {
	Pattern   string   `json:"pattern"`
	Instances []string `json:"instances"`
	Tags      []string `json:"tags"`
}

// CrawlerUserAgents reads crawler-user-agents.json from the agents
// folder of the testdata folder dir.
func CrawlerUserAgents(t testing.TB, dir string) []CrawlerEntry {
	t.Helper()
	path := filepath.Join(dir, "agents", "crawler-user-agents", "crawler-user-agents.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read %s (testdata/agents ships with the repository): %v", path, err)
	}
	var entries []CrawlerEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return entries
}

// BrowserFamilies are the families of uap-core's tests/test_ua.yaml
// (testdata/agents/uap-core) that are web browsers: desktop, mobile,
// regional, TV, console and embedded ones, old and new, and the browsers
// built into apps (WebViews), each taken with every one of its cases.
// Left out: bots, HTTP libraries and tools, headless and monitoring
// browsers (HeadlessChrome, PhantomJS, Catchpoint, Ruxit), mail clients
// other than Thunderbird (which a real log saw accused), and families that
// mix an app's API client with its browser (Facebook, Pinterest,
// Twitter, Spotify, Roku).
var BrowserFamilies = []string{
	"115 Browser", "360 Secure Browser", "AOL", "AOL Desktop Gold Browser", "AOL Shield Browser", "AVG", "Agency",
	"Aloha Browser", "Amazon Silk", "Android", "AtContent", "Atom Browser", "Avast Secure Browser", "Avira",
	"BOLT", "Baidu Browser", "Baidu Explorer", "Basilisk", "BlackBerry WebKit", "Brave", "Bunjalloo", "CCleaner",
	"Camoufox", "Chrome", "Chrome Frame", "Chrome Mobile", "Chrome Mobile WebView", "Chrome Mobile iOS", "Chromium",
	"Chromium GOST Browser", "Coc Coc", "Comodo Dragon", "Config", "Conkeror", "Craving Explorer Browser",
	"Decentr Web3 Browser", "Dolfin", "Dolphin", "Dragon", "DuckDuckGo", "DuckDuckGo Mobile", "Ecosia Android",
	"Ecosia iOS", "Edge", "Edge Mobile", "Espial", "Facebook Messenger", "FireWeb", "Firefox", "Firefox (Shiretoko)",
	"Firefox Beta", "Firefox Mobile", "Firefox iOS", "Google", "HbbTV", "Herring", "HeyTap Browser", "HiBrowser",
	"Hola Browser", "Honor Browser", "Huawei Browser", "ICE Browser", "IE", "IE Large Screen", "IE Mobile",
	"IceCat", "Instagram", "Iron", "JiSu Browser", "KakaoTalk", "Kindle", "Konqueror", "LINE", "Ladybird",
	"Lightning", "LikeWise", "Lite Browser", "Mail.ru Chromium Browser", "Maxthon", "Midori", "Minimo",
	"Mint Browser", "MiuiBrowser", "Mobile Safari", "Mobile Safari UI/WKWebView", "MozillaDeveloperPreview",
	"MullvadBrowser", "Mypal Browser", "NCSA Mosaic", "NetCast Smart TV", "NetFront", "NetFront NX",
	"Nokia Browser", "Nokia OSS Browser", "Norton", "ONE Browser", "Obigo", "Odin", "Open Wave", "Openwave",
	"Opera", "Opera Coast", "Opera GX", "Opera Mini", "Opera Mobile", "Opera Neon", "Opera Tablet", "Opera Touch",
	"Otter", "Ovi Browser", "Pale Moon", "Phantom Browser", "Phoenix Browser", "Planetweb", "Puffin",
	"QAX Browser", "QQ Browser", "QQ Browser Mini", "QQ Browser Mobile", "QtCarBrowser", "Quark", "Quark PC",
	"QupZilla", "Rekonq", "RockMelt", "Safari", "Sailfish Browser", "Samsung Internet", "Sber Browser",
	"Seznam prohlížeč", "Skyfire", "Sleipnir", "Smart Lenovo Browser", "SmartTV WebBrowser", "Snapchat",
	"Snowshoe", "Sparrow Browser", "Talon Cyber Security Browser", "Telegram", "Teleca Browser", "Tenta Browser",
	"ThunderBrowse", "Thunderbird", "TikTok", "Trailer", "UC Browser", "UP.Browser", "Unique", "Vewd Browser",
	"Viewer", "VivoBrowser", "Vivaldi", "Waterfox", "WeChat Browser", "WeTab", "WebKit Nightly", "Weibo", "Whale",
	"Wolvic Browser", "Yandex Browser", "iBrowser Mini", "mDolphin", "qutebrowser", "webOS Browser",
}

// Overlaps reports whether an occurrence of token in ua overlaps loc,
// the span a pattern matched there (nil: none).
func Overlaps(ua, token string, loc []int) bool {
	for i := 0; loc != nil && token != ""; i++ {
		j := strings.Index(ua[i:], token)
		if j < 0 {
			return false
		}
		i += j
		if i < loc[1] && i+len(token) > loc[0] {
			return true
		}
	}
	return false
}

// BrowserCase is one real browser User-Agent header and its family.
type BrowserCase struct{ UA, Family string }

// UAPCoreCases returns every case of agents/uap-core/test_ua.yaml of the
// testdata folder dir: a real User-Agent header and the family uap-core
// expects for it.
func UAPCoreCases(t testing.TB, dir string) []BrowserCase {
	t.Helper()
	path := filepath.Join(dir, "agents", "uap-core", "test_ua.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (it ships with the repository): %v", path, err)
	}
	var doc struct {
		Cases []struct {
			UA     string `yaml:"user_agent_string"`
			Family string `yaml:"family"`
		} `yaml:"test_cases"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := make([]BrowserCase, len(doc.Cases))
	for i, c := range doc.Cases {
		out[i] = BrowserCase{c.UA, c.Family}
	}
	return out
}

// RealBrowsers returns every case of BrowserFamilies in
// agents/uap-core/test_ua.yaml of the testdata folder dir (UAPCoreCases),
// but NotBrowserRequests.
func RealBrowsers(t testing.TB, dir string) []BrowserCase {
	t.Helper()
	path := filepath.Join(dir, "agents", "uap-core", "test_ua.yaml")
	cases := UAPCoreCases(t, dir)
	want := map[string]bool{}
	for _, f := range BrowserFamilies {
		want[f] = true
	}
	seen := map[string]bool{}
	var out []BrowserCase
	for _, c := range cases {
		if want[c.Family] {
			seen[c.Family] = true
			if _, ok := NotBrowserRequests[c.UA]; !ok {
				out = append(out, c)
			}
		}
	}
	for _, f := range BrowserFamilies {
		if !seen[f] {
			t.Errorf("%s: family %q has no case", path, f)
		}
	}
	return out
}

// NotBrowserRequests are cases that uap-core files under one of
// BrowserFamilies, or ua-parser-js names a browser for, but that are no
// person's browser's request, with why. RealBrowsers and
// UAParserJSBrowsers leave them out.
var NotBrowserRequests = map[string]string{
	"Mozilla/5.0 (X11; Linux armv7l) AppleWebKit/537.36 (KHTML, like Gecko) Raspbian Chromium/72.0.3626.121 HeadlessChrome/72.0.3626.121 Safari/537.36": "Chrome driven by a program (HeadlessChrome), which ua-parser-js names by its first product, Chromium",
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google Web Preview) Chrome/27.0 .1453 Safari/537.36.":                       "Google Web Preview, a crawler (crawler-user-agents lists it)",
	"Instagram 415.0.0.36.76 Android (33/13; 320dpi; 720x1600; samsung; SM-A032M; a3core; m168; pt_BR; 874816631)":                                      "the Instagram app's API client, not its in-app browser",
	"Instagram 416.0.0.47.66 Android (36/16; 306dpi; 1008x2244; Google/google; Pixel 9 Pro XL; komodo; komodo; en_US; 879745420)":                       "the Instagram app's API client, not its in-app browser",
	"Snapchat/10.29.1.0 (iPhone10,1; iOS 11.2; gzip)":                    "the Snapchat app's API client, not its in-app browser",
	"Android: Client/0.0.0-indev (Android SDK built for x86; Android 9)": "an app's HTTP client in the Android emulator",
}

// UAParserJSBrowsers returns the browser headers of ua-parser-js's test
// fixtures (agents/ua-parser-js of the testdata folder dir): each distinct
// header of its browser, engine, OS and device tests that ua-parser-js
// 1.0.41 itself names a browser for (browsers.tsv, which label.js there
// writes), with that name as the family; but for the headless and
// scripted browsers (NotBrowserFamilies, NotBrowserRequests). A project independent of
// uap-core chose them: desktop, mobile, regional, TV, console, car,
// embedded and in-app browsers, old and new. Every header must be one of
// a fixture's, so that nothing is added by hand.
func UAParserJSBrowsers(t testing.TB, dir string) []BrowserCase {
	t.Helper()
	folder := filepath.Join(dir, "agents", "ua-parser-js")
	fixtures := map[string]bool{}
	for _, f := range []string{"browser-test.json", "engine-test.json", "os-test.json", "device-test.json"} {
		data, err := os.ReadFile(filepath.Join(folder, f))
		if err != nil {
			t.Fatalf("read %s (it ships with the repository): %v", f, err)
		}
		var cases []struct {
			UA string `json:"ua"`
		}
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			fixtures[c.UA] = true
		}
	}
	path := filepath.Join(folder, "browsers.tsv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (it ships with the repository): %v", path, err)
	}
	var out []BrowserCase
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.SplitN(line, "\t", 3)
		switch {
		case len(f) != 3:
			t.Fatalf("%s line %d: want file, browser and user agent", path, i+1)
		case i == 0:
			continue // the header
		case !fixtures[f[2]]:
			t.Fatalf("%s line %d: %q is in no fixture", path, i+1, f[2])
		}
		_, notFamily := NotBrowserFamilies[f[1]]
		if _, notRequest := NotBrowserRequests[f[2]]; !notFamily && !notRequest {
			out = append(out, BrowserCase{f[2], f[1]})
		}
	}
	return out
}

// NotBrowserFamilies are the browser names of ua-parser-js that are no
// person's browser, with why; UAParserJSBrowsers leaves them out, as
// BrowserFamilies does uap-core's.
var NotBrowserFamilies = map[string]string{
	"Chrome Headless": "Chrome driven by a program (crawler-user-agents lists HeadlessChrome as browser automation)",
	"PhantomJS":       "a scripted headless browser (crawler-user-agents lists it as browser automation)",
}

// UnnamedBrowsers are real browser headers that nothing classifies as a
// browser's: they have no browser's shape (identity.BrowserShaped) and
// ua-parser's data (uap-core's regexes.yaml) names no family for them.
// They are other clients, judged under their first product: a limit of
// the data, listed so that a change shows (a uap-core that names them
// makes the browser tests ask for their removal).
var UnnamedBrowsers = map[string]string{
	"Doris/1.15 [en] (Symbian)":               "Doris, a Symbian browser: uap-core has no rule for it",
	"NetSurf/3.10 (Linux; Arch Linux)":        "NetSurf: uap-core has no rule for it",
	"Links (2.xpre7; Linux 2.4.18 i586; x)":   "Links: uap-core's rule wants a version of digits, \"2.1\", not \"2.xpre7\"",
	"NCSA Mosaic/1.0 (X11;SunOS 4.1.4 sun4m)": "NCSA Mosaic: uap-core's rule wants \"NCSA_Mosaic/\", not the space of version 1.0",
}
