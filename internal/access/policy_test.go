package access_test

import (
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// uaExampleBot is a crawler's User-Agent header.
const uaExampleBot = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"

// newPolicy returns a Policy with a real Fetcher and Cache, for tests of
// what a fetch outcome means to a decision.
func newPolicy(guard *netguard.Guard, exempt []string) *policy.Policy {
	f := newFetcher(access.FetcherOptions{Guard: guard, Timeout: 5 * time.Second})
	return policy.New(policy.Options{
		Identifier:  identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache:       access.NewCache(f.Fetch, access.CacheOptions{}),
		ExemptHosts: exempt,
	})
}
