// Package redisurl reads a shared.redis_url, the address of the store a
// fleet of replicas shares: it checks the URL without connecting
// (Validate), redacts its password for logs and errors (Redact), and opens
// the go-redis client it names (NewClient). The configuration checks the
// URL with the same code the fleet opens it with.
package redisurl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// clusterSuffix marks a Redis Cluster URL: "redis+cluster://" or
// "rediss+cluster://".
const clusterSuffix = "+cluster"

// NewClient returns a client for a shared.redis_url:
//
//   - redis://[user:password@]host:port[/db][?options] and rediss:// (TLS),
//     unix:///path/to/socket: one server (go-redis ParseURL);
//   - redis://[user:password@]sentinel:port?master_name=NAME&addr=sentinel2:port...:
//     a primary found through Sentinel (go-redis ParseFailoverURL); the
//     user and password are the Sentinel's;
//   - redis+cluster://host:port?addr=host2:port... and rediss+cluster://:
//     a Redis Cluster (go-redis ParseClusterURL).
//
// Query options are go-redis's (dial_timeout, read_timeout, pool_size,
// ...); see failFast for the defaults that differ. poolSize is the
// connection pool's size (per node for a cluster) unless the URL gives
// pool_size; 0 leaves go-redis's default (10 per GOMAXPROCS).
func NewClient(raw string, poolSize int) (redis.UniversalClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse URL: %w", redactErr(err, raw))
	}
	q := u.Query()
	ff := failFast{retries: !q.Has("max_retries"), dials: !q.Has("dialer_retries")}
	if !q.Has("pool_size") {
		ff.poolSize = poolSize
	}
	switch {
	case strings.HasSuffix(u.Scheme, clusterSuffix):
		u.Scheme = strings.TrimSuffix(u.Scheme, clusterSuffix)
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, redactErr(err, raw)
		}
		ff.apply(&o.MaxRetries, &o.DialerRetries, &o.PoolSize, &o.ContextTimeoutEnabled)
		return redis.NewClusterClient(o), nil
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, redactErr(err, raw)
		}
		ff.apply(&o.MaxRetries, &o.DialerRetries, &o.PoolSize, &o.ContextTimeoutEnabled)
		return redis.NewFailoverClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, redactErr(err, raw)
	}
	ff.apply(&o.MaxRetries, &o.DialerRetries, &o.PoolSize, &o.ContextTimeoutEnabled)
	return redis.NewClient(o), nil
}

// failFast are the client defaults of a shared store: no command retries
// and one dial attempt (each costs a request its time; the local
// fallback answers instead), a pool of poolSize connections (when above
// 0), and the operation timeout of the context honoured. URL options
// (max_retries, dialer_retries, pool_size) win.
type failFast struct {
	retries, dials bool
	poolSize       int
}

func (f failFast) apply(maxRetries, dialerRetries, poolSize *int, ctxTimeout *bool) {
	if f.retries {
		*maxRetries = -1
	}
	if f.dials {
		*dialerRetries = 1
	}
	if f.poolSize > 0 {
		*poolSize = f.poolSize
	}
	*ctxTimeout = true
}

// Validate checks a shared.redis_url without connecting.
func Validate(raw string) error {
	c, err := NewClient(raw, 0)
	if err != nil {
		return err
	}
	return c.Close()
}

// Redact returns raw with its password replaced by "xxxxx", for logs and
// errors.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// redactErr replaces raw in err's text by its redacted form: url.Parse
// errors quote the whole URL, password included.
func redactErr(err error, raw string) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); strings.Contains(msg, raw) {
		return errors.New(strings.ReplaceAll(msg, raw, Redact(raw)))
	}
	return err
}
