package identity_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// judged reports whether audit access-log judges a request with this
// identity: anything but a browser, when it has a product token.
func judged(id identity.Recognition) bool {
	return id.Client != identity.ClientBrowser && len(id.Candidates) > 0
}

// TestBrowsersAreNotJudged: the real browser headers of two corpora,
// uap-core's test cases and ua-parser-js's fixtures (an independent
// project's choice, which ua-parser's data was not written from), are
// classified browsers, or name no product token, so that audit
// access-log never judges them; but for testkit.UnnamedBrowsers, which
// must be judged, so that a change of the data shows.
func TestBrowsersAreNotJudged(t *testing.T) {
	testdata := filepath.Join("..", "..", "testdata")
	for _, corpus := range []struct {
		name  string
		cases []testkit.BrowserCase
	}{
		{"uap-core", testkit.RealBrowsers(t, testdata)},
		{"ua-parser-js", testkit.UAParserJSBrowsers(t, testdata)},
	} {
		t.Run(corpus.name, func(t *testing.T) {
			id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
			families := map[string]bool{}
			browsers, unnamed, limits := 0, 0, 0
			for _, c := range corpus.cases {
				families[c.Family] = true
				got := id.Recognise(c.UA)
				_, limit := testkit.UnnamedBrowsers[c.UA]
				switch {
				case judged(got) && limit:
					limits++
				case judged(got):
					t.Errorf("%s: %q: judged as %s %q, want a browser", c.Family, c.UA, got.Client, got.Token)
				case limit:
					t.Errorf("%s: %q: listed in testkit.UnnamedBrowsers but not judged (%s): remove it", c.Family, c.UA, got.Client)
				case got.Client == identity.ClientBrowser:
					browsers++
				default:
					unnamed++
				}
			}
			t.Logf("%d real browser headers of %d families: %d classified browsers, %d name no product, %d judged (testkit.UnnamedBrowsers)",
				len(corpus.cases), len(families), browsers, unnamed, limits)
			if len(corpus.cases) < 300 || len(families) < 100 {
				t.Errorf("got %d browser headers of %d families, want at least 300 of 100", len(corpus.cases), len(families))
			}
		})
	}
}

// TestClassByFamily: a header that neither marks a crawler nor has a
// browser's shape is classified by ua-parser's data: a browser when
// uap-core names its family, unless it carries a URL or "compatible"; a
// crawler when uap-core files it under Spider or its family declares a
// bot; else what the shape rule says.
func TestClassByFamily(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	for _, tt := range []struct {
		ua   string
		want identity.Client
	}{
		{"J2ME/UCWEB7.0.3.45/139/7682", identity.ClientBrowser},                  // UC Browser
		{"NCSA_Mosaic/2.0 (Windows 3.1)", identity.ClientBrowser},                // NCSA Mosaic
		{"Dolphin 7.4 (iPhone; iPhone OS 7.0.2; de_DE)", identity.ClientBrowser}, // Dolphin
		{"Nokia6230/2.0 (compatible; Zyxel/1.0)", identity.ClientOther},          // a Nokia phone's family, but "compatible"
		{"NCSA_Mosaic/2.0 (Windows 3.1; http://example.com/)", identity.ClientOther},
		{"curl/8.4.0", identity.ClientOther},                                 // the catalogue knows it as a library
		{"ExampleFetcher/1.0", identity.ClientOther},                         // no family
		{"aws-sdk-go/1.44.0 (go1.20; linux; amd64)", identity.ClientBrowser}, // a limit: uap-core names SDKs' families too
	} {
		if got := id.Recognise(tt.ua); got.Client != tt.want {
			t.Errorf("Recognise(%q): got %s, want %s", tt.ua, got.Client, tt.want)
		}
		if got := id.Recognise(tt.ua); got.Client != tt.want { // remembered
			t.Errorf("Recognise(%q) again: got %s, want %s", tt.ua, got.Client, tt.want)
		}
	}
}

// TestLongHeaderNotLookedUp: a header longer than any browser's (over
// 1,024 octets, which the memo does not keep) is not looked up in
// ua-parser's data, so that a log of such headers costs no regexp run
// each: it stays what its shape says.
func TestLongHeaderNotLookedUp(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	ua := "NCSA_Mosaic/2.0 (Windows 3.1; " + strings.Repeat("x", 1024) + ")"
	if got := id.Recognise(ua).Client; got != identity.ClientOther {
		t.Errorf("a %d-octet header: got %s, want other", len(ua), got)
	}
	if got := id.Recognise(ua[:30] + ")").Client; got != identity.ClientBrowser {
		t.Errorf("its short form: got %s, want browser", got)
	}
}
