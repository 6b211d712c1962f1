package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/fleet/redisurl"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Shared configures the state a fleet of robotsproxy replicas shares in
// Redis 6+ or Valkey 7+: robots.txt results (one fetch per
// authority per TTL for the whole fleet) and, where politeness is on,
// crawl-delay spacing, back-off and the in-flight cap. Off by default.
type Shared struct {
	// RedisURL is the store: redis://[user:pass@]host:port[/db],
	// rediss:// (TLS), unix:///path, redis://sentinel:port?master_name=NAME
	// (Sentinel) or redis+cluster://host:port?addr=host2:port (Cluster),
	// with go-redis's query options. Default "": nothing is shared.
	RedisURL string `yaml:"redis_url"`
	// KeyPrefix starts every key, before the format version ("v2:").
	// Default "robotsproxy:".
	KeyPrefix string `yaml:"key_prefix"`
	// LockTTL bounds how long one replica's robots.txt fetch holds the
	// authority's fleet-wide lock; it must exceed robots.timeout. Default
	// 20s.
	LockTTL time.Duration `yaml:"lock_ttl"`
	// Timeout bounds each operation on the store; past it the replica
	// falls back to local state. Default 500ms.
	Timeout time.Duration `yaml:"timeout"`
	// RecordKeyFile is a file holding the fleet's record key (at least
	// fleet.MinRecordKeyBytes octets, surrounding white space ignored),
	// read at start: every shared robots.txt record then carries an
	// HMAC-SHA256 under it, and records without a valid one are fetched
	// again. Every replica needs the same key. Default "": records are
	// not authenticated.
	RecordKeyFile string `yaml:"record_key_file"`
	// PoolSize is the number of connections to the store per replica (per
	// node of a cluster); the URL's pool_size option wins. Independent
	// of GOMAXPROCS. Default 128 (rules.DefaultStorePoolSize).
	PoolSize int `yaml:"pool_size"`
}

// maxPoolSize bounds shared.pool_size: redis-server accepts 10,000
// clients by default (maxclients), for the whole fleet.
const maxPoolSize = 10_000

func defaultShared() Shared {
	return Shared{KeyPrefix: rules.DefaultStoreKeyPrefix, LockTTL: rules.DefaultStoreLockTTL, Timeout: rules.DefaultStoreTimeout,
		PoolSize: rules.DefaultStorePoolSize}
}

// validateShared checks the shared.* keys. Errors name the key.
func (c *Config) validateShared() error {
	sh := c.Shared
	if sh.KeyPrefix == "" || len(sh.KeyPrefix) > 64 || strings.ContainsFunc(sh.KeyPrefix, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("shared.key_prefix: want 1 to 64 octets without spaces or control characters, got %q", sh.KeyPrefix)
	}
	if err := between(sh.Timeout, time.Millisecond, time.Minute, "each operation on the store"); err != nil {
		return fmt.Errorf("shared.timeout: %w", err)
	}
	if sh.PoolSize < 1 || sh.PoolSize > maxPoolSize {
		return fmt.Errorf("shared.pool_size: want 1 to %d connections, got %d", maxPoolSize, sh.PoolSize)
	}
	if err := positive(sh.LockTTL); err != nil {
		return fmt.Errorf("shared.lock_ttl: %w", err)
	}
	if sh.RecordKeyFile != "" && (strings.TrimSpace(sh.RecordKeyFile) != sh.RecordKeyFile ||
		strings.ContainsFunc(sh.RecordKeyFile, func(r rune) bool { return r < ' ' || r == 0x7f })) {
		return fmt.Errorf("shared.record_key_file: want a file path without surrounding spaces or control characters, got %q", sh.RecordKeyFile)
	}
	if sh.RedisURL == "" {
		return nil
	}
	if sh.LockTTL <= c.Robots.Timeout {
		return fmt.Errorf("shared.lock_ttl: must exceed robots.timeout (%v), got %v: a slower fetch would let a second replica fetch too", c.Robots.Timeout, sh.LockTTL)
	}
	if err := redisurl.Validate(sh.RedisURL); err != nil {
		return fmt.Errorf("shared.redis_url: %s: %w", redisurl.Redact(sh.RedisURL), err)
	}
	return nil
}
