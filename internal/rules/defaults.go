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

// Defaults and bounds of the robots.txt cache (the cache.* keys and
// access.CacheOptions, access.TTLRules).
const (
	// MaxCacheTTL is the longest a robots.txt result is used, and the
	// default of cache.max_ttl: RFC 9309 2.4, "crawlers SHOULD NOT use the
	// cached version for more than 24 hours".
	MaxCacheTTL = 24 * time.Hour
	// DefaultMinTTL is the shortest a result is used, whatever
	// Cache-Control says (cache.min_ttl).
	DefaultMinTTL = time.Minute
)

// DefaultCacheMaxBytes is the robots.txt cache's byte bound when none is
// set (cache.max_bytes, access.CacheOptions.MaxBytes): 512 MiB.
const DefaultCacheMaxBytes = 512 << 20

// DefaultCacheMaxEntries is the robots.txt cache's bound on authorities
// when none is set (cache.max_entries, access.CacheOptions.MaxEntries):
// 500,000 authorities, where DefaultCacheMaxBytes is reached at about
// 1.07 KB an entry. Over a corpus of real robots.txt files an entry accounts about
// 1.3 KB at the median (20 KB on average, 12 KB at the 90th percentile),
// and a 404 (no robots.txt) about 0.6 KB: the byte bound evicts first
// unless most authorities have no or tiny robots.txt files, and then the
// entries hold at least 300 MB (0.6 KB each).
const DefaultCacheMaxEntries = 500_000

// Defaults of the client limits and the outbound transport
// (client.max_request_target_bytes, client.body_idle_timeout,
// upstream.max_idle_conns, upstream.max_idle_conns_per_host; the proxy's
// Options and TransportOptions).
const (
	// DefaultMaxRequestTargetBytes bounds the request target; a longer
	// one is answered 414.
	DefaultMaxRequestTargetBytes = 8192
	// DefaultBodyIdleTimeout bounds each wait for more of a request body.
	DefaultBodyIdleTimeout = 30 * time.Second
	// DefaultMaxIdleConns bounds the idle upstream connections in total:
	// the default client.max_connections, since an HTTP/1.1 client
	// connection keeps at most one upstream connection busy.
	DefaultMaxIdleConns = 4096
	// DefaultMaxIdleConnsPerHost bounds the idle upstream connections per
	// origin.
	DefaultMaxIdleConnsPerHost = 1024
)

// Defaults of the HTTP/2 bounds of a client connection inside an
// intercepted tunnel (client.h2_max_concurrent_streams,
// client.h2_max_resets_per_second; the proxy's Options).
const (
	// DefaultH2MaxConcurrentStreams is the SETTINGS_MAX_CONCURRENT_STREAMS
	// the proxy announces (RFC 9113 6.5.2): the least RFC 9113 6.5.2
	// recommends, and as many requests as a crawler keeps in flight to one
	// site by far.
	DefaultH2MaxConcurrentStreams = 100
	// DefaultH2MaxResetsPerSecond bounds the RST_STREAM frames a client
	// sends on one connection, per second on average (with as many at
	// once): the rapid-reset attack (CVE-2023-44487) sends thousands.
	DefaultH2MaxResetsPerSecond = 100
)

// Defaults of the audit log's checkpoints: one every 10,000 lines or 60
// seconds, whichever comes first (audit.checkpoint_every_lines,
// audit.checkpoint_every, audit.CheckpointOptions).
const (
	DefaultCheckpointLines = 10000
	DefaultCheckpointEvery = 60 * time.Second
)

// DefaultMaxCerts bounds the cache of interception leaf certificates, one
// per host (mitm.max_certs).
const DefaultMaxCerts = 1024

// Defaults of the live view (the live.* keys and live.Options).
const (
	// DefaultLiveMaxSubscribers caps the live view's streams
	// (live.max_subscribers).
	DefaultLiveMaxSubscribers = 8
	// DefaultLiveRingBytes is the ring of recent decisions: 1 MiB, about
	// 1,500 audit lines of 700 octets (live.ring_bytes). A larger ring
	// costs every request with nobody watching: each line copied into it
	// lands in memory the caches no longer hold and pushes out the
	// request path's own (4 MiB cost about 6 µs per allowed request on
	// the benchmark machine, 1 MiB about 1.5 µs; docs/live.md).
	DefaultLiveRingBytes = 1 << 20
	// MinLiveRingBytes is the smallest ring: sixteen of the longest
	// audit lines (64 KiB), so that every line fits.
	MinLiveRingBytes = 1 << 20
	// DefaultLiveWriteTimeout drops a stream whose subscriber takes no
	// events for this long (live.write_timeout).
	DefaultLiveWriteTimeout = 10 * time.Second
)
