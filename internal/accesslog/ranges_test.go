package accesslog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/ipranges"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

func rangesFixture(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join("..", "..", "testdata", "ipranges", name)
}

// storeFixture stores a fixture as ipranges update would, for -ip-ranges
// auto.
func storeFixture(t *testing.T, dataDir, name, fixture string, tokens ...string) {
	t.Helper()
	b, err := os.ReadFile(rangesFixture(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ipranges.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	rec := ipranges.Record{Name: name, URL: "https://example.org/" + fixture, Tokens: tokens, FetchedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := ipranges.Save(dataDir, rec, b, f); err != nil {
		t.Fatal(err)
	}
}

// -ip-ranges auto takes each token's ranges from the stored copies, with
// their provenance; TOKEN=FILE and TOKEN=URL given by name win over them
// for that token; a JAFAR file's service tags give prefixes to the
// services they name.
func TestLoadRanges(t *testing.T) {
	dataDir := t.TempDir()
	// A source of its own: the tokens its record names. A known source:
	// the tokens this version knows it covers, whatever its record says.
	storeFixture(t, dataDir, "example-google", "googlebot-fixture.json", "Googlebot", "Googlebot-Image")
	storeFixture(t, dataDir, "bing", "bingbot-fixture.json", "bingbot")
	jafar := filepath.Join(t.TempDir(), "jafar.json")
	os.WriteFile(jafar, []byte(`{"formatVersion":"1.1","creationTime":"2026-01-02T03:04:05Z","prefixes":[
		{"ipv4Prefix":"192.0.2.0/24"},{"ipv4Prefix":"198.51.100.0/24","services":["OtherBot"]}]}`), 0o644)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("20.171.206.0/24\n"))
	}))
	defer origin.Close()
	f := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	v := &Verifier{}
	given, err := LoadRanges(context.Background(), v, []string{"auto", "bingbot=" + jafar, "GPTBot=" + origin.URL + "/gptbot.txt"},
		RangesOptions{DataDir: dataDir, Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(given, ",") != "bingbot,GPTBot" {
		t.Errorf("given %q", given)
	}
	want := map[string]struct {
		prefixes int
		source   string
		given    bool
	}{
		"bingbot":          {1, jafar, true},
		"OtherBot":         {1, jafar, false},
		"GPTBot":           {1, origin.URL + "/gptbot.txt", true},
		"Googlebot":        {7, filepath.Join(dataDir, "ipranges"), false},
		"Googlebot-Image":  {7, filepath.Join(dataDir, "ipranges"), false},
		"adidxbot":         {5, filepath.Join(dataDir, "ipranges"), false},
		"BingPreview":      {5, filepath.Join(dataDir, "ipranges"), false},
		"MicrosoftPreview": {5, filepath.Join(dataDir, "ipranges"), false},
	}
	trs := v.TokenRanges()
	if len(trs) != len(want) {
		t.Fatalf("%d tokens: %+v", len(trs), trs)
	}
	for _, tr := range trs {
		w := want[tr.Token]
		if tr.Prefixes != w.prefixes || len(tr.Sources) != 1 || !strings.HasPrefix(tr.Sources[0].Source, w.source) || tr.Given != w.given {
			t.Errorf("%s: %+v", tr.Token, tr)
		}
		s := tr.Sources[0]
		switch tr.Token {
		case "Googlebot":
			if s.URL != "https://example.org/googlebot-fixture.json" || s.FetchedAt == nil || s.CreationTime.Format(time.DateOnly) != "2023-09-26" || s.Format != ipranges.FormatGoogle {
				t.Errorf("stored copy's provenance %+v", s)
			}
		case "GPTBot":
			if s.URL != origin.URL+"/gptbot.txt" || s.FetchedAt == nil || s.CreationTime != nil || s.Format != ipranges.FormatPlain {
				t.Errorf("fetched provenance %+v", s)
			}
		case "bingbot":
			if s.URL != "" || s.FetchedAt != nil || s.CreationTime.Format(time.RFC3339) != "2026-01-02T03:04:05Z" || s.Format != ipranges.FormatJAFAR {
				t.Errorf("file provenance %+v", s)
			}
		}
	}
	for _, tt := range []struct{ token, client, want string }{
		{"bingbot", "157.55.39.1", Impostor}, // bingbot's stored ranges lost to the one given by name
		{"bingbot", "192.0.2.9", Verified},
		{"OtherBot", "198.51.100.9", Verified},
		{"bingbot", "198.51.100.9", Impostor}, // tagged for OtherBot only
		{"googlebot-image", "66.249.79.230", Verified},
	} {
		if got := v.Verify(context.Background(), tt.token, tt.client); got != tt.want {
			t.Errorf("%s from %s: %s, want %s", tt.token, tt.client, got, tt.want)
		}
	}
}

func TestLoadRangesErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"prefixes":[]}`), 0o644)
	tests := []struct {
		spec, dataDir, want string
	}{
		{"auto", t.TempDir(), "no ranges stored in"},
		{"Googlebot=" + bad, "", "no prefix"},
		{"Googlebot=" + filepath.Join(t.TempDir(), "none.json"), "", "no such file"},
		{"Googlebot", "", "want auto, TOKEN=FILE or TOKEN=URL"},
		{"Googlebot=https://example.org/x.json", "", "not fetched here"},
	}
	for _, tt := range tests {
		_, err := LoadRanges(context.Background(), &Verifier{}, []string{tt.spec}, RangesOptions{DataDir: tt.dataDir})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.spec, err, tt.want)
		}
	}
}

func TestCheckGivenTokens(t *testing.T) {
	r := &Result{Crawlers: []*Crawler{{Token: "SiteBot"}}}
	tests := []struct {
		given []string
		want  string // "" for no error
	}{
		{[]string{"Googlebot", "googlebot", "GPTBot", "CCBot"}, ""},
		{[]string{"SiteBot"}, ""},            // in the log, unknown otherwise
		{[]string{"Slurp", "AhrefsBot"}, ""}, // in the crawler catalogue
		{[]string{"Ahrefsbott"}, "did you mean AhrefsBot?"},
		{[]string{"Googlbot"}, "did you mean Googlebot?"},
		{[]string{"GPTBott"}, "did you mean GPTBot?"},
		{[]string{"SiteBto"}, "did you mean SiteBot?"},
		{[]string{"bingbot", "Bingbott"}, "-ip-ranges Bingbott=...: no crawler of that name is known or in the logs; did you mean bingbot?"},
	}
	for _, tt := range tests {
		err := CheckGivenTokens(tt.given, r, KnownTokens())
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q: %v, want %q", tt.given, err, tt.want)
		}
	}
}
