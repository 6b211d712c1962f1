package access

import (
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TTLRules say how long a robots.txt result is used before it is fetched
// again (RFC 9309 2.4). A single proxy's Cache and a fleet's shared store
// follow the same rules, so that both keep the same response equally long.
// Zero values mean the defaults; see Off.
type TTLRules struct {
	// MaxTTL is the longest a result is used before refetching; default and
	// upper bound 24h (RFC 9309 2.4: SHOULD NOT use a cached copy for more
	// than 24 hours). A shorter Cache-Control max-age wins.
	MaxTTL time.Duration
	// MinTTL is the shortest; it protects origins that send max-age=0.
	// Default 1m; Off for no minimum. At most MaxTTL.
	MinTTL time.Duration
	// UnreachableRetry is how long an unreachable result is kept before the
	// next attempt. Default 1m.
	UnreachableRetry time.Duration
}

// DefaultMinTTL is TTLRules.MinTTL when it is 0 (rules.DefaultMinTTL).
const DefaultMinTTL = rules.DefaultMinTTL

// WithDefaults returns r with its defaults filled in: MaxTTL in (0, 24h],
// MinTTL in [0, MaxTTL] (Off becomes 0), UnreachableRetry above 0.
func (r TTLRules) WithDefaults() TTLRules {
	if r.MaxTTL <= 0 || r.MaxTTL > rules.MaxCacheTTL {
		r.MaxTTL = rules.MaxCacheTTL
	}
	switch {
	case r.MinTTL == 0:
		r.MinTTL = DefaultMinTTL
	case r.MinTTL < 0:
		r.MinTTL = 0
	}
	r.MinTTL = min(r.MinTTL, r.MaxTTL)
	if r.UnreachableRetry <= 0 {
		r.UnreachableRetry = time.Minute
	}
	return r
}

// TTL returns how long a is used (r must have its defaults, see
// WithDefaults): an unreachable result for UnreachableRetry, any other for
// its Cache-Control max-age (a.MaxAge; -1 for none) clamped to [MinTTL,
// MaxTTL] (RFC 9309 2.4).
func (r TTLRules) TTL(a policy.Access) time.Duration {
	if a.Result == policy.Unreachable {
		return r.UnreachableRetry
	}
	ttl := r.MaxTTL
	if a.MaxAge >= 0 && a.MaxAge < ttl {
		ttl = a.MaxAge
	}
	return max(ttl, r.MinTTL)
}
