package identity_test

import (
	"path/filepath"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// judged reports whether audit access-log judges a request with this
// identity: anything but a browser, when it has a product token.
func judged(id identity.Recognition) bool {
	return id.Client != identity.ClientBrowser && len(id.Candidates) > 0
}

// TestBrowsersAreNotJudged: the real browser headers of the corpus are
// classified browsers, or name no product token, so that audit
// access-log never judges them; the unshaped ones excepted.
func TestBrowsersAreNotJudged(t *testing.T) {
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	cases := testkit.RealBrowsers(t, filepath.Join("..", "..", "testdata"))
	n, browsers, unnamed, limits := 0, 0, 0, 0
	for _, c := range cases {
		n++
		got := id.Recognise(c.UA)
		_, known := testkit.UnshapedBrowsers[c.UA]
		switch {
		case judged(got) && known:
			limits++
		case judged(got):
			t.Errorf("%s: %q: judged as %s %q, want a browser", c.Family, c.UA, got.Client, got.Token)
		case known:
			t.Errorf("%s: %q: listed in testkit.UnshapedBrowsers but not judged (%s): remove it", c.Family, c.UA, got.Client)
		case got.Client == identity.ClientBrowser:
			browsers++
		default:
			unnamed++
		}
	}
	t.Logf("%d real browser headers of %d families: %d classified browsers, %d name no product, %d judged (unshapedBrowsers)",
		n, len(testkit.BrowserFamilies), browsers, unnamed, limits)
	if n < 300 {
		t.Errorf("got %d browser headers, want at least 300", n)
	}
}
