package config

import (
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Politeness spaces a crawler's requests to one site as its robots.txt
// asks (Crawl-delay), pauses them when the site answers 429 or 503 with
// Retry-After, and caps the requests in flight per site. Everything is
// off by default. A site is an authority (scheme, host, port); requests
// are spaced per product token and site.
type Politeness struct {
	// CrawlDelay is "ignore" or "enforce": with enforce, the requests of
	// one product token to one site are sent (their first octet written
	// to the origin's connection) at least the crawl delay of the token's
	// robots.txt group apart. Default "ignore".
	CrawlDelay string `yaml:"crawl_delay"`
	// MaxCrawlDelay caps a robots.txt crawl delay. Default 30s.
	MaxCrawlDelay time.Duration `yaml:"max_crawl_delay"`
	// DefaultDelay is the crawl delay when robots.txt gives none (or was
	// not read); at most max_crawl_delay. Default 0.
	DefaultDelay time.Duration `yaml:"default_delay"`
	// OnEarly is what happens to a request that comes before its turn:
	// "wait" holds it until its turn, first come first served, for at most
	// max_wait (past that: 429); "reject" answers 429 with Retry-After at
	// once. Default "wait".
	OnEarly string `yaml:"on_early"`
	// MaxWait bounds how long a request is held. Default 60s.
	MaxWait time.Duration `yaml:"max_wait"`
	// Backoff is "ignore" or "enforce": with enforce, an origin's 429, or
	// 503 with Retry-After, pauses the product token at the site for the
	// Retry-After (or, for a 429 without one, default_backoff, doubled for
	// each such answer until a success), under on_early. Default "ignore".
	Backoff string `yaml:"backoff"`
	// DefaultBackoff is the pause after a 429 without Retry-After.
	// Default 5s.
	DefaultBackoff time.Duration `yaml:"default_backoff"`
	// MaxBackoff caps every pause, Retry-After included. Default 10m.
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxConcurrentPerHost caps the requests in flight to one site, all
	// product tokens together, under on_early; 0 means no cap. Default 0.
	MaxConcurrentPerHost int `yaml:"max_concurrent_per_host"`
	// MaxKeys bounds the (product token, site) pairs whose spacing or
	// back-off is tracked; idle pairs are forgotten, and a new pair past
	// the bound is refused with 429. Default 100000.
	MaxKeys int `yaml:"max_keys"`
}

// Usage configures usage preferences: what each crawler's output is used
// for, against what sites allow (robots.txt Content-Usage and
// Content-Signal).
type Usage struct {
	// Enforce denies with 403 (reason "usage-preference") a request whose
	// declared purpose the site refuses for the path; in report mode the
	// denial is only audited. Without it preferences are only audited.
	// Default false.
	Enforce bool `yaml:"enforce"`
	// Purposes declare per product token what its output is used for,
	// e.g. {GPTBot: [train-ai]}; identity.users[].purposes and
	// identity.client_ranges[].purposes win. Purposes are "train-ai",
	// "search" and "ai-input". Default none.
	Purposes map[string][]string `yaml:"purposes"`
}

func defaultPoliteness() Politeness {
	return Politeness{
		CrawlDelay:     "ignore",
		MaxCrawlDelay:  rules.DefaultMaxCrawlDelay,
		OnEarly:        "wait",
		MaxWait:        rules.DefaultMaxWait,
		Backoff:        "ignore",
		DefaultBackoff: rules.DefaultBackoffPause,
		MaxBackoff:     rules.DefaultMaxBackoff,
		MaxKeys:        rules.DefaultPolitenessKeys,
	}
}

// validatePoliteness checks the keys. Errors name the key.
func (c *Config) validatePoliteness() error {
	pl := c.Politeness
	checks := []struct {
		key string
		err error
	}{
		{"politeness.crawl_delay", oneOf(pl.CrawlDelay, "ignore", "enforce")},
		{"politeness.max_crawl_delay", positive(pl.MaxCrawlDelay)},
		{"politeness.default_delay", between(pl.DefaultDelay, 0, pl.MaxCrawlDelay, "it must not exceed politeness.max_crawl_delay")},
		{"politeness.on_early", oneOf(pl.OnEarly, "wait", "reject")},
		{"politeness.max_wait", positive(pl.MaxWait)},
		{"politeness.backoff", oneOf(pl.Backoff, "ignore", "enforce")},
		{"politeness.default_backoff", positive(pl.DefaultBackoff)},
		{"politeness.max_backoff", between(pl.MaxBackoff, pl.DefaultBackoff, 24*time.Hour, "at least politeness.default_backoff")},
		{"politeness.max_concurrent_per_host", atLeast(pl.MaxConcurrentPerHost, 0, "")},
		{"politeness.max_keys", atLeast(pl.MaxKeys, 1, "")},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return fmt.Errorf("%s: %w", ch.key, ch.err)
		}
	}
	for token, list := range c.Usage.Purposes {
		if !robots.IsProductToken(token) {
			return fmt.Errorf("usage.purposes: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", token)
		}
		if err := purposes(list); err != nil {
			return fmt.Errorf("usage.purposes.%s%w", token, err)
		}
	}
	for i, u := range c.Identity.Users {
		if err := purposes(u.Purposes); err != nil {
			return fmt.Errorf("identity.users[%d].purposes%w", i, err)
		}
	}
	for i, r := range c.Identity.ClientRanges {
		if err := purposes(r.Purposes); err != nil {
			return fmt.Errorf("identity.client_ranges[%d].purposes%w", i, err)
		}
	}
	return nil
}

// purposes checks a list of declared purposes; the error starts with the
// index ("[1]: ...").
func purposes(list []string) error {
	for i, p := range list {
		if !rules.IsPurpose(p) {
			return fmt.Errorf("[%d]: want one of %v, got %q", i, rules.Purposes(), p)
		}
	}
	return nil
}

// PolitenessOn reports whether any politeness feature is on.
func (c *Config) PolitenessOn() bool {
	pl := c.Politeness
	return pl.CrawlDelay == "enforce" || pl.Backoff == "enforce" || pl.MaxConcurrentPerHost > 0
}
