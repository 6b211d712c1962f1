package catalogue_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
)

// testdata is the repository's testdata folder.
var testdata = filepath.Join("..", "..", "..", "testdata")

// TestEmbeddedIsBuilt: the embedded catalogue is what Build makes of the
// upstream files in testdata/agents at the commits MANIFEST.tsv gives, so
// that nothing in it is written by hand and "go generate" reproduces it.
func TestEmbeddedIsBuilt(t *testing.T) {
	in, licenses, err := catalogue.ReadInput(filepath.Join(testdata, "agents"), filepath.Join(testdata, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := catalogue.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := catalogue.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("data", "catalogue.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("data/catalogue.json is not what testdata/agents builds: run go generate ./internal/identity/...")
	}
	for name, text := range licenses {
		if got, err := os.ReadFile(filepath.Join("data", "LICENSE."+name)); err != nil || !bytes.Equal(got, text) {
			t.Errorf("data/LICENSE.%s: not the source's licence (%v)", name, err)
		}
	}
	c := catalogue.Embedded()
	if len(c.Entries) != len(f.Entries) || len(c.Sources) != 3 {
		t.Fatalf("embedded: %d entries, %d sources; want %d and 3", len(c.Entries), len(c.Sources), len(f.Entries))
	}
	for _, s := range c.Sources {
		if len(s.Commit) != 40 || s.License != "MIT" || !strings.Contains(s.LicenseText, "Permission is hereby granted") || s.Repository == "" || s.Path == "" {
			t.Errorf("source %+v: want a repository, a path, a 40-hex commit and the MIT licence with its text", s)
		}
	}
	if v := c.Version(); !strings.HasPrefix(v, "crawler-user-agents@7c7f9f254f16 ai.robots.txt@738c80df2169 ") {
		t.Errorf("version %q", v)
	}
}

func TestLiterals(t *testing.T) {
	tests := []struct {
		pattern string
		lits    []string
		exact   bool
	}{
		{"Googlebot\\/", []string{"Googlebot/"}, true},
		{"[wW]get", []string{"Wget", "wget"}, true},
		{"^curl", []string{"^curl"}, true},
		{"SSL Labs$", []string{"SSL Labs$"}, true},
		{"(^| )sentry\\/", []string{"^sentry/", " sentry/"}, true},
		{"Ahrefs(Bot|SiteAudit)", []string{"AhrefsBot", "AhrefsSiteAudit"}, true},
		{"AdsBot-Google([^-]|$)", []string{"AdsBot-Google"}, false},
		{"ContextualBot[\\s\\S]*outcomes\\.net", []string{"ContextualBot"}, false},
		{"BlogTraffic\\/\\d\\.\\d+ Feed-Fetcher", []string{" Feed-Fetcher"}, false},
	}
	for _, tt := range tests {
		lits, exact, err := catalogue.Literals(tt.pattern)
		if err != nil || exact != tt.exact || !slices.Equal(lits, tt.lits) {
			t.Errorf("Literals(%q) = %q, %v, %v; want %q, %v", tt.pattern, lits, exact, err, tt.lits, tt.exact)
		}
	}
	for _, bad := range []string{"(", "[0-9]+", ".*", "a|b"} {
		if _, _, err := catalogue.Literals(bad); err == nil {
			t.Errorf("Literals(%q): want an error", bad)
		}
	}
}

func TestShows(t *testing.T) {
	tests := []struct {
		ua, name string
		shows    bool
	}{
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "Slurp", true},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "yahoo", true},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "yandex", false},
		{"WGETbot/1.0 (+http://wget.alanreed.org)", "wget", false},
		{"Googlebot-Image/1.0", "Googlebot", false},
		{"larbin_2.6.2 (larbin@correa.org)", "larbin", true},
		{"Mozilla/2.0 (compatible; Ask Jeeves/Teoma; +http://sp.ask.com/)", "Teoma", true},
		{"Mozilla/5.0 (compatible; MegaIndex.ru/2.0; +http://megaindex.com/crawler)", "MegaIndex", false},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp/3.0; http://help.yahoo.com/help/us/ysearch/slurp)", "Slurp", true},
		{"Mozilla/5.0 (compatible; Linux x86_64; Mail.RU_Bot/2.0; +http://go.mail.ru/)", "mail", false},
		{"Mozilla/5.0 (compatible; adbeat_bot; +support@adbeat.com)", "adbeat", false},
	}
	for _, tt := range tests {
		if got := catalogue.Shows(tt.ua, tt.name); got != tt.shows {
			t.Errorf("Shows(%q, %q) = %v, want %v", tt.ua, tt.name, got, tt.shows)
		}
	}
	if !catalogue.StartsWord("Mozilla/5.0 (compatible; adidxbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot") ||
		catalogue.StartsWord("Mozilla/5.0 (compatible; Alexabot/1.0)", "exabot") || !catalogue.StartsWord("findlinks/2.0", "findlink") ||
		!catalogue.StartsWord("msnbot-media/1.0", "msnbot") {
		t.Error("StartsWord: want bingbot in a URL, msnbot in msnbot-media and findlink in findlinks, not exabot in Alexabot")
	}
}

func TestMatch(t *testing.T) {
	c := catalogue.Embedded()
	names := func(ua string) []string {
		var out []string
		for _, i := range c.Match(nil, ua) {
			out = append(out, c.Entries[i].Pattern)
		}
		return out
	}
	for ua, want := range map[string][]string{
		"curl/8.5.0":    {"^curl"},
		"libcurl/8.5.0": nil, // ^curl is anchored
		"Mozilla/5.0 (compatible; AdsBot-Google-Mobile; +http://www.google.com/mobile/adsbot.html)":                       {"AdsBot-Google-Mobile"},
		"AdsBot-Google (+http://www.google.com/adsbot.html)":                                                              {"AdsBot-Google([^-]|$)"},
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36": nil,
		"Opera/9.80 (MAUI Runtime; Opera Mini/4.4.39008/37.9178; U; en) Presto/2.12.423 Version/12.16":                    nil, // "008\/" is left out
	} {
		if got := names(ua); !slices.Equal(got, want) {
			t.Errorf("Match(%q) = %q, want %q", ua, got, want)
		}
	}
	if got := c.Named(nil, "gptbot", "GPTBot/1.2"); len(got) != 1 || !strings.Contains(c.Entries[got[0]].Operator, "OpenAI") {
		t.Errorf("Named(gptbot): %v, want ai.robots.txt's entry, operated by OpenAI", got)
	}
	if got := c.Named(nil, "ChatGPT", "ChatGPT/1.0"); len(got) != 0 {
		t.Errorf("Named(ChatGPT) without the words \"ChatGPT Agent\": %v, want none", got)
	}
}

// TestUpdate downloads upstream files at a commit from a local server
// laid out as raw.githubusercontent.com, and rewrites their manifest rows.
func TestUpdate(t *testing.T) {
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents")
	for _, l := range catalogue.Layout {
		os.MkdirAll(filepath.Join(agents, l.Dir), 0o755)
	}
	manifest := filepath.Join(dir, "MANIFEST.tsv")
	rows := "agents/ai-robots-txt/robots.json\tai-robots-txt/ai.robots.txt\trobots.json\told\t1\tx\tagents-list\tlicense=MIT\n" +
		"agents/ai-robots-txt/LICENSE\tai-robots-txt/ai.robots.txt\tLICENSE\told\t1\tx\tagents-list\tlicense=MIT\n"
	os.WriteFile(manifest, []byte(rows), 0o644)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ai-robots-txt/ai.robots.txt/abc/robots.json":
			w.Write([]byte(`{"NewBot":{"operator":"x"}}`))
		case "/ai-robots-txt/ai.robots.txt/abc/LICENSE":
			w.Write([]byte("MIT"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if err := catalogue.Update(srv.Client(), srv.URL, agents, manifest, map[string]string{"ai.robots.txt": "abc"}); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(filepath.Join(agents, "ai-robots-txt", "robots.json"))
	m, _ := os.ReadFile(manifest)
	if string(body) != `{"NewBot":{"operator":"x"}}` || !strings.Contains(string(m), "robots.json\tabc\t27\t") {
		t.Errorf("robots.json %q, manifest %q", body, m)
	}
	err := catalogue.Update(srv.Client(), srv.URL, agents, manifest, map[string]string{"ai.robots.txt": "missing"})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a missing commit: %v, want a 404 error", err)
	}
	if err := catalogue.Update(srv.Client(), srv.URL, agents, manifest, map[string]string{"nosuch": "abc"}); err == nil {
		t.Error("an unknown source: want an error")
	}
}
