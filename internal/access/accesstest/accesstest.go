// Package accesstest holds what the tests of robots.txt access (package
// access) and of the decision (package policy) share: a Fetcher that may
// dial the loopback test servers, and a Policy built on a real Fetcher and
// Cache, for tests of what a fetch outcome means to a decision. It is for
// tests only.
package accesstest

import (
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// NewFetcher returns access.NewFetcher(o), with a Guard that allows
// private addresses (the loopback test servers) when o has none.
func NewFetcher(o access.FetcherOptions) *access.Fetcher {
	if o.Guard == nil {
		o.Guard = &netguard.Guard{AllowPrivate: true}
	}
	return access.NewFetcher(o)
}

// NewPolicy returns a Policy with the default browser tokens, a real
// Fetcher (guard as given: nil allows the loopback test servers; a 5 s
// timeout) and a real Cache, exempting the hosts of exempt.
func NewPolicy(guard *netguard.Guard, exempt []string) *policy.Policy {
	f := NewFetcher(access.FetcherOptions{Guard: guard, Timeout: 5 * time.Second})
	return policy.New(policy.Options{
		Identifier:  identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
		Cache:       access.NewCache(f.Fetch, access.CacheOptions{}),
		ExemptHosts: exempt,
	})
}
