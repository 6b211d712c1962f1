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

// RealBrowsers returns every case of BrowserFamilies in
// agents/uap-core/test_ua.yaml of the testdata folder dir, but
// NotBrowserRequests.
func RealBrowsers(t testing.TB, dir string) []BrowserCase {
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
	want := map[string]bool{}
	for _, f := range BrowserFamilies {
		want[f] = true
	}
	seen := map[string]bool{}
	var out []BrowserCase
	for _, c := range doc.Cases {
		if want[c.Family] {
			seen[c.Family] = true
			if _, ok := NotBrowserRequests[c.UA]; !ok {
				out = append(out, BrowserCase{c.UA, c.Family})
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
// BrowserFamilies but that are no browser's request, with why.
var NotBrowserRequests = map[string]string{
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google Web Preview) Chrome/27.0 .1453 Safari/537.36.": "Google Web Preview, a crawler (crawler-user-agents lists it)",
	"Instagram 415.0.0.36.76 Android (33/13; 320dpi; 720x1600; samsung; SM-A032M; a3core; m168; pt_BR; 874816631)":                "the Instagram app's API client, not its in-app browser",
	"Instagram 416.0.0.47.66 Android (36/16; 306dpi; 1008x2244; Google/google; Pixel 9 Pro XL; komodo; komodo; en_US; 879745420)": "the Instagram app's API client, not its in-app browser",
	"Snapchat/10.29.1.0 (iPhone10,1; iOS 11.2; gzip)":                                                                             "the Snapchat app's API client, not its in-app browser",
	"Android: Client/0.0.0-indev (Android SDK built for x86; Android 9)":                                                          "an app's HTTP client in the Android emulator",
}

// UnshapedBrowsers are real browser headers that have no browser's shape
// (identity.BrowserShaped): no rendering engine, no Mozilla or Opera platform
// comment, no product that declares a browser. By the classification
// rule they are other clients, judged under their first product: a
// known limitation, listed so that a change shows.
var UnshapedBrowsers = map[string]string{
	"Bunjalloo/0.7.6(Nintendo DS;U;en)":                                        "a Nintendo DS homebrew browser (2008)",
	"NCSA_Mosaic/2.0 (Windows 3.1)":                                            "NCSA Mosaic (1994)",
	"J2ME/UCWEB7.0.3.45/139/7682":                                              "UC Browser 7 for J2ME phones",
	"IUC(U;iOS 5.1.1;Zh-cn;320*480;)/UCWEB7.9.0.94/41/997":                     "UC Browser 7 for iOS 5",
	"Nokia5320di/UCWEB8.0.3.99/28/999":                                         "UC Browser 8 for Symbian",
	"Dolphin 6.5.1 (iPad; iPhone OS 6.1.3; de_DE)":                             "Dolphin 6 for iOS 6",
	"Dolphin 7.4 (iPhone; iPhone OS 7.0.2; de_DE)":                             "Dolphin 7 for iOS 7",
	"Dolphin 7.5.1 (iPhone; iPhone OS 7.0.3; de_DE)":                           "Dolphin 7 for iOS 7",
	"Safari/6533.18.5 CFNetwork/454.9.8 Darwin/10.4.0 (i386) (MacBookPro7,1)":  "Safari fetching through CFNetwork, Apple's HTTP library",
	"Safari/7536.30.1 CFNetwork/520.5.1 Darwin/11.4.2 (i386) (MacBook3,1)":     "Safari fetching through CFNetwork, Apple's HTTP library",
	"Safari/9537.71 CFNetwork/673.0.2 Darwin/13.0.1 (x86_64) (MacBookPro11,1)": "Safari fetching through CFNetwork, Apple's HTTP library",
}
