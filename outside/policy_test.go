// Package outside_test builds robotsproxy's policy and proxy as a program
// outside the module does: it may import only the public packages (its
// module path is not under github.com/robotsproxy/robotsproxy, so the
// compiler refuses the internal ones), and it supplies where robots.txt
// comes from and how crawlers are named through policy's interfaces.
package outside_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// siteRobots is a policy.Cache that answers from robots.txt files held in
// memory, by canonical authority (host:port): what a program that reads
// robots.txt from an archive, or fetches it itself, plugs in. An
// authority it has no file for is unavailable (a 404: RFC 9309 2.3.1.3).
type siteRobots map[string]string

func (s siteRobots) GetKeyed(_ context.Context, _, scheme, authority string) (policy.Access, policy.CacheState) {
	body, ok := s[authority]
	if !ok {
		return policy.Access{Result: policy.Unavailable, Status: 404, URL: policy.RobotsURL(scheme, authority)}, policy.CacheHit
	}
	return policy.Access{Result: policy.Successful, Status: 200, URL: policy.RobotsURL(scheme, authority),
		Robots: robots.Parse([]byte(body))}, policy.CacheHit
}

// firstProduct is a policy.Identifier that names a crawler by the first
// product of its User-Agent ("ExampleBot/1.0 (+https://...)" is
// ExampleBot), and "*" when that is no product token (RFC 9309 2.2.1).
type firstProduct struct{}

func (firstProduct) Identify(userAgent string) policy.Identity {
	name, _, _ := strings.Cut(userAgent, "/")
	if !robots.IsProductToken(name) {
		return policy.Identity{Token: "*", Source: policy.SourceDefault}
	}
	return policy.Identity{Token: name, Candidates: []string{name}, Source: policy.SourceUserAgent}
}

const exampleRobots = "User-agent: ExampleBot\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n"

// A policy decides requests under RFC 9309 from the robots.txt files its
// Cache gives and the crawlers its Identifier names; everything else has
// defaults (mode enforce, no host lists, CONNECT to port 443). A denial
// explains itself.
func Example_policy() {
	p := policy.New(policy.Options{
		Identifier: firstProduct{},
		Cache:      siteRobots{"example.com:443": exampleRobots},
	})
	for _, r := range []policy.Request{
		{Scheme: "https", Host: "example.com", Path: "/public/a", UserAgent: "ExampleBot/1.0"},
		{Scheme: "https", Host: "example.com", Path: "/private/b", UserAgent: "ExampleBot/1.0"},
		{Scheme: "https", Host: "example.com", Path: "/public/%2e%2e/private/b", UserAgent: "ExampleBot/1.0"},
		{Scheme: "https", Host: "example.com", Path: "/public/a", UserAgent: "OtherBot/2.0"},
		{Scheme: "https", Host: "robots.txt.example", Path: "/anything", UserAgent: "OtherBot/2.0"},
		{Scheme: "https", Host: "example.com", Path: "/robots.txt", UserAgent: "OtherBot/2.0"},
	} {
		d := p.Decide(context.Background(), r)
		fmt.Printf("%s %s%s: allowed %v, %s\n", d.Identity.Token, r.Host, r.Path, d.Allowed, d.Reason)
		if !d.Allowed {
			fmt.Print("  ", d.Text(0))
		}
	}
	// Output:
	// ExampleBot example.com/public/a: allowed true, no-matching-rule
	// ExampleBot example.com/private/b: allowed false, rule
	//   robotsproxy: https://example.com/robots.txt disallows this URL for product token "ExampleBot" (line 2: Disallow: /private/)
	// ExampleBot example.com/public/%2e%2e/private/b: allowed false, rule
	//   robotsproxy: https://example.com/robots.txt disallows this URL for product token "ExampleBot" (line 2: Disallow: /private/)
	// OtherBot example.com/public/a: allowed false, rule
	//   robotsproxy: https://example.com/robots.txt disallows this URL for product token "OtherBot" (line 5: Disallow: /)
	// OtherBot robots.txt.example/anything: allowed true, unavailable
	// OtherBot example.com/robots.txt: allowed true, implicit-robots-txt
}
