package identity_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
)

// benchUAs are User-Agent headers of crawlers and browsers, as the proxy
// sees them.
var benchUAs = []string{uaExampleBot, uaGooglebotEvg, uaBingbot, uaChromeWindows,
	"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
	"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider"}

// BenchmarkIdentify measures identification of a User-Agent header: memo
// is the proxy's usual case (a crawler repeats its header), cold a header
// seen for the first time.
func BenchmarkIdentify(b *testing.B) {
	b.Run("memo", func(b *testing.B) {
		id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			id.Identify(benchUAs[i%len(benchUAs)])
		}
	})
	b.Run("cold", func(b *testing.B) { // one op: every header of benchUAs, first seen
		b.ReportAllocs()
		n := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
			b.StartTimer()
			for _, ua := range benchUAs {
				n += len(id.Identify(ua).Candidates)
			}
		}
		if n == 0 {
			b.Fatal("no candidates")
		}
	})
}

// recogniseUAs are headers as audit access-log sees them: benchUAs, and
// headers of no browser's shape, which Recognise looks up in ua-parser's
// data (browsers, libraries, a tool that no rule names).
var recogniseUAs = append(append([]string(nil), benchUAs...),
	"J2ME/UCWEB7.0.3.45/139/7682", "NCSA_Mosaic/2.0 (Windows 3.1)", "Dolphin 7.4 (iPhone; iPhone OS 7.0.2; de_DE)",
	"curl/8.4.0", "python-requests/2.31.0", "aws-sdk-go/1.44.0 (go1.20; linux; amd64)", "ExampleFetcher/1.0")

// BenchmarkRecognise measures Recognise, audit access-log's question:
// memo is a header seen before, cold one op of every header of
// recogniseUAs first seen (ua-parser's data already compiled: that is
// once per process, see uaparser's BenchmarkParse).
func BenchmarkRecognise(b *testing.B) {
	identity.NewIdentifier(identity.DefaultBrowserTokens(), nil).Recognise("J2ME/UCWEB7.0.3.45/139/7682")
	b.Run("memo", func(b *testing.B) {
		id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			id.Recognise(recogniseUAs[i%len(recogniseUAs)])
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
			b.StartTimer()
			for _, ua := range recogniseUAs {
				if id.Recognise(ua).Client == identity.ClientBrowser {
					n++
				}
			}
		}
		if n == 0 {
			b.Fatal("no browser")
		}
	})
}
