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
