package rules

import "time"

// Defaults of politeness (the politeness.* keys, politeness.Options and
// politeness.LocalOptions).
const (
	// DefaultMaxCrawlDelay caps a robots.txt crawl delay
	// (politeness.max_crawl_delay).
	DefaultMaxCrawlDelay = 30 * time.Second
	// DefaultMaxWait bounds how long a request is held for its turn
	// (politeness.max_wait).
	DefaultMaxWait = 60 * time.Second
	// DefaultBackoffPause is the pause after a 429 without Retry-After
	// (politeness.default_backoff).
	DefaultBackoffPause = 5 * time.Second
	// DefaultMaxBackoff caps every pause (politeness.max_backoff).
	DefaultMaxBackoff = 10 * time.Minute
	// DefaultPolitenessKeys bounds the (product token, site) pairs
	// tracked (politeness.max_keys).
	DefaultPolitenessKeys = 100_000
)

// Defaults of the shared store (the shared.* keys and fleet.Options).
const (
	// DefaultStoreKeyPrefix starts every key (shared.key_prefix).
	DefaultStoreKeyPrefix = "robotsproxy:"
	// DefaultStoreLockTTL bounds one replica's robots.txt fetch lock
	// (shared.lock_ttl).
	DefaultStoreLockTTL = 20 * time.Second
	// DefaultStoreTimeout bounds each operation on the store
	// (shared.timeout).
	DefaultStoreTimeout = 500 * time.Millisecond
	// DefaultStorePoolSize is the store's connection pool (per node of a
	// cluster), whatever GOMAXPROCS is: a request holds a connection for
	// one round trip, so at 1 ms to the store 128 connections carry about
	// 128,000 round trips a second, past what a replica serves, while a
	// request that waits for a connection pays a whole round trip more.
	// Connections open on demand only. 128 per replica lets about 75
	// replicas share one store under redis-server's default maxclients
	// (10,000).
	DefaultStorePoolSize = 128
)
