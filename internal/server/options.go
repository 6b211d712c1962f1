package server

import (
	"net/netip"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/internal/usage"
)

// The configuration (package config: schema, validation, defaults) maps to
// the runtime options of the packages it configures here, and only here.

// PinOptions returns the pinned identities of c and the auth throttle
// (identity.auth_throttle) for identity.NewPinner; call after Validate. The
// clock is left to NewPinner's default.
func PinOptions(c config.Config) identity.PinOptions {
	t := c.Identity.AuthThrottle
	o := identity.PinOptions{Required: c.Identity.RequireCredentials, Throttle: identity.ThrottleOptions{
		FailuresPerMinute: t.FailuresPerMinute, Burst: t.Burst, MaxConcurrentChecks: t.MaxConcurrentChecks}}
	for _, u := range c.Identity.Users {
		o.Users = append(o.Users, identity.User{Name: u.Name, PasswordHash: []byte(u.PasswordBcrypt), Token: u.Token,
			Mode: identity.Mode(u.Mode), Purposes: u.Purposes})
	}
	for _, r := range c.Identity.ClientRanges {
		if p, err := netip.ParsePrefix(r.CIDR); err == nil {
			o.Ranges = append(o.Ranges, identity.ClientRange{Prefix: p, Token: r.Token, Mode: identity.Mode(r.Mode), Purposes: r.Purposes})
		}
	}
	return o
}

// sendMargin is what politeness.Options.SendWithin allows beyond connecting
// to the origin: the egress steps and the transport's own work.
const sendMargin = 10 * time.Second

// PolitenessOptions returns politeness.Options for the configuration c,
// with a LocalScheduler (call after Validate). The caller adds the
// Observer.
func PolitenessOptions(c config.Config) politeness.Options {
	pl := c.Politeness
	return politeness.Options{
		CrawlDelay:           pl.CrawlDelay == "enforce",
		MaxCrawlDelay:        pl.MaxCrawlDelay,
		DefaultDelay:         pl.DefaultDelay,
		Reject:               pl.OnEarly == "reject",
		MaxWait:              pl.MaxWait,
		Backoff:              pl.Backoff == "enforce",
		MaxConcurrentPerHost: pl.MaxConcurrentPerHost,
		// A turn counts from the send (the proxy's transport reports it),
		// which may follow connecting and the TLS handshake, each bounded
		// by upstream.connect_timeout.
		CountFromSend: true,
		SendWithin:    2*c.Upstream.ConnectTimeout + sendMargin,
		Scheduler: politeness.NewLocalScheduler(politeness.LocalOptions{
			DefaultBackoff: pl.DefaultBackoff, MaxBackoff: pl.MaxBackoff, MaxEntries: pl.MaxKeys}),
	}
}

// UsageDeclarations returns the purposes declared per product token
// (usage.purposes; call after Validate), nil when none is. Those of users
// and client ranges go with their pins (PinOptions).
func UsageDeclarations(c config.Config) *usage.Declarations {
	if len(c.Usage.Purposes) == 0 {
		return nil
	}
	return usage.NewDeclarations(c.Usage.Purposes)
}

// CacheOptions returns the robots.txt cache's options (cache.*). A zero
// cache.min_ttl or cache.stale_for is access.Off: no minimum, no stale
// copy.
func CacheOptions(c config.Config) access.CacheOptions {
	return access.CacheOptions{
		MaxEntries: c.Cache.MaxEntries,
		MaxBytes:   int64(c.Cache.MaxBytes),
		TTLRules:   TTLRules(c),
		StaleFor:   offIfZero(c.Cache.StaleFor),
	}
}

// TTLRules returns the cache lifetime rules (cache.max_ttl, cache.min_ttl,
// cache.unreachable_retry) that the robots.txt cache and a fleet's shared
// store both follow. A zero cache.min_ttl is access.Off: no minimum.
func TTLRules(c config.Config) access.TTLRules {
	return access.TTLRules{MaxTTL: c.Cache.MaxTTL, MinTTL: offIfZero(c.Cache.MinTTL),
		UnreachableRetry: c.Cache.UnreachableRetry}
}

// offIfZero maps a configuration duration whose documented zero means
// "off" onto access.Off (the cache's zero means its default).
func offIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return access.Off
	}
	return d
}

// AuditOptions returns the audit writer's options of c (audit.chain,
// audit.on_write_error); the caller adds Prev, OnError, Now and
// Checkpoints.
func AuditOptions(c config.Config) audit.Options {
	return audit.Options{Chain: c.Audit.Chain, OnWriteError: c.Audit.OnWriteError}
}

// CheckpointOptions returns the checkpoint log's options
// (audit.checkpoint_file, audit.checkpoint_every_lines,
// audit.checkpoint_every), key being the contents of
// audit.checkpoint_hmac_key_file (nil: unsigned).
func CheckpointOptions(c config.Config, key []byte) audit.CheckpointOptions {
	return audit.CheckpointOptions{Path: c.Audit.CheckpointFile, EveryLines: c.Audit.CheckpointEveryLines,
		Every: c.Audit.CheckpointEvery, Key: key}
}

// PaymentLimits returns the budgets of payments.identities (call after
// Validate) as the table the paying step looks identities up in: per
// user, per client range (masked), per product token and the default.
func PaymentLimits(c config.Config) *egress.Table[payments.Limit] {
	t := &egress.Table[payments.Limit]{Users: map[string]payments.Limit{}, Ranges: map[netip.Prefix]payments.Limit{},
		Tokens: map[string]payments.Limit{}}
	for _, p := range c.Payments.Identities {
		config.AddTo(t, p.Selector(), p.Limit())
	}
	return t
}
