package server

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/money"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
	"github.com/robotsproxy/robotsproxy/robots"
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
			Mode: policy.Mode(u.Mode), Purposes: u.Purposes})
	}
	for _, r := range c.Identity.ClientRanges {
		if p, err := netip.ParsePrefix(r.CIDR); err == nil {
			o.Ranges = append(o.Ranges, identity.ClientRange{Prefix: p, Token: r.Token, Mode: policy.Mode(r.Mode), Purposes: r.Purposes})
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
func UsageDeclarations(c config.Config) *policy.Declarations {
	if len(c.Usage.Purposes) == 0 {
		return nil
	}
	return policy.NewDeclarations(c.Usage.Purposes)
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
// audit.on_write_error) and its group commit window
// (audit.DefaultGroupWindow); the caller adds Prev, OnError, Now and
// Checkpoints.
func AuditOptions(c config.Config) audit.Options {
	return audit.Options{Chain: c.Audit.Chain, OnWriteError: c.Audit.OnWriteError, GroupWindow: audit.DefaultGroupWindow}
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
		addTo(t, p.Selector(), paymentLimit(p))
	}
	return t
}

// paymentLimit returns the budget of one payments.identities entry (call
// after Validate: the amounts parse).
func paymentLimit(p config.PaymentIdentity) payments.Limit {
	maxPrice, _ := money.ParseAmount(p.MaxPrice)
	budget, _ := money.ParseAmount(p.Budget)
	return payments.Limit{Budget: p.Name(), Currency: p.Currency, MaxPrice: maxPrice, PerDay: budget}
}

// SigningSettings reads the keys of signing.identities (call after
// Validate) and returns the signing settings they make: one Agent per
// entry, selected by user, client range, product token or as the
// default. A key that cannot be read, or an active key without its
// private key, is an error naming the key.
func SigningSettings(c config.Config) (*signing.Settings, error) {
	s := &signing.Settings{Label: c.Signing.Label, Expires: c.Signing.Expires, MaxBodyBytes: c.Signing.MaxBodyBytes,
		Agents: egress.Table[*signing.Agent]{Users: map[string]*signing.Agent{}, Ranges: map[netip.Prefix]*signing.Agent{},
			Tokens: map[string]*signing.Agent{}}}
	for i := range c.Signing.Identities {
		id := &c.Signing.Identities[i]
		a, err := signingAgent(id)
		if err != nil {
			return nil, fmt.Errorf("signing.identities[%d].%w", i, err)
		}
		a.ProductToken = c.TokenOf(id.Selector())
		s.All = append(s.All, a)
		addTo(&s.Agents, id.Selector(), a)
	}
	if err := s.Validate(time.Now()); err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return s, nil
}

// signingAgent reads one identity's key directories; its Signature-Agent
// URL is the configured one as a JWK Set URI (signing.JWKSURL).
func signingAgent(id *config.SigningIdentity) (*signing.Agent, error) {
	a := &signing.Agent{URL: signing.JWKSURL(id.SignatureAgent), Card: id.Card}
	active := id.ActiveKey()
	for j, dir := range id.Keys {
		k, err := signing.LoadKeyDir(dir)
		if err != nil {
			return nil, fmt.Errorf("keys[%d]: %w", j, err)
		}
		a.Keys = append(a.Keys, k)
		if dir == active {
			if !k.CanSign() {
				return nil, fmt.Errorf("active: %s holds no %s: the active key must be able to sign", dir, signing.PrivateKeyFile)
			}
			a.Active = k
		}
	}
	return a, nil
}

// DirectoryEntries returns the entries of the key directory and the
// cards of the signing identities s, whose keys st read (SigningSettings:
// st.All[i] is s.Identities[i]): the default identity first (its card is
// served at signing.CardPath), then the others in the configuration's
// order.
func DirectoryEntries(s config.Signing, st *signing.Settings) ([]signing.Entry, error) {
	if len(st.All) != len(s.Identities) {
		return nil, fmt.Errorf("signing.identities: %d identities, but keys read for %d", len(s.Identities), len(st.All))
	}
	var entries []signing.Entry
	for i, id := range s.Identities {
		a := st.All[i]
		e := signing.Entry{Slug: CardSlug(id), ProductToken: a.ProductToken, SignatureAgent: a.URL, Card: a.Card, Keys: a.Keys}
		if id.Default {
			entries = append([]signing.Entry{e}, entries...)
		} else {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// CardSlug names an identity's card (signing.CardsPrefix+SLUG+".json"):
// "default", the product token in lower case, "user-NAME" or
// "range-CIDR", with every character a slug does not allow replaced by
// '-'.
func CardSlug(id config.SigningIdentity) string {
	var s string
	switch {
	case id.Default:
		s = "default"
	case id.ProductToken != "":
		s = id.ProductToken
	case id.User != "":
		s = "user-" + id.User
	default:
		s = "range-" + id.ClientRange
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
			return r
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
	s = strings.TrimLeft(s, "._-")
	return s[:min(len(s), 64)]
}

// addTo maps the identity s selects to v in t, a table whose maps are
// made: by user, by client range (masked), by product token
// (egress.TokenKey) or as the default. Call after Validate.
func addTo[T any](t *egress.Table[T], s config.Selector, v T) {
	switch {
	case s.User != "":
		t.Users[s.User] = v
	case s.ClientRange != "":
		t.Ranges[s.Range()] = v
	case s.ProductToken != "":
		t.Tokens[egress.TokenKey(s.ProductToken)] = v
	default:
		t.Default = &v
	}
}

// Guard returns the dialling guard of allow_private and
// allow_private_ranges (call after Validate).
func Guard(c config.Config) *netguard.Guard {
	return &netguard.Guard{AllowPrivate: c.AllowPrivate, Allow: c.PrivateRanges()}
}

// FetcherOptions returns the robots.txt fetcher's options (robots.*),
// dialling through guard.
func FetcherOptions(c config.Config, guard *netguard.Guard) access.FetcherOptions {
	return access.FetcherOptions{
		Guard:                      guard,
		UserAgent:                  c.Robots.UserAgent,
		ConnectTimeout:             c.Robots.ConnectTimeout,
		Timeout:                    c.Robots.Timeout,
		Parse:                      parseOptions(c),
		TooManyRequestsUnreachable: c.Robots.TooManyRequests == "unreachable",
	}
}

// parseOptions returns the robots.txt parser's options (robots.max_bytes).
func parseOptions(c config.Config) robots.Options {
	return robots.Options{MaxBytes: c.Robots.MaxBytes}
}

// TransportOptions returns the outbound transport's options (upstream.*,
// and allow_private and allow_private_ranges, which Guard applies too).
func TransportOptions(c config.Config) proxy.TransportOptions {
	return proxy.TransportOptions{
		ConnectTimeout:        c.Upstream.ConnectTimeout,
		ResponseHeaderTimeout: c.Upstream.ResponseHeaderTimeout,
		MaxIdleConns:          c.Upstream.MaxIdleConns,
		MaxIdleConnsPerHost:   c.Upstream.MaxIdleConnsPerHost,
		IdleTimeout:           c.Upstream.IdleTimeout,
		AllowPrivate:          c.AllowPrivate,
		AllowPrivateRanges:    c.PrivateRanges(),
	}
}

// ProxyOptions returns the proxy's options of c: audit.on_write_error,
// log.max_field_bytes, client.* and cache.unreachable_retry (call after
// Validate). The caller adds the runtime parts: Intercept, OnUntrusted,
// Policy, Transport, Egress, Audit, Metrics and Politeness.
func ProxyOptions(c config.Config) proxy.Options {
	return proxy.Options{
		AuditContinue: c.Audit.OnWriteError == "continue",
		MaxFieldBytes: c.Log.MaxFieldBytes,

		MaxRequestTargetBytes:  c.Client.MaxRequestTargetBytes,
		MaxHeaderBytes:         c.Client.MaxHeaderBytes,
		ReadHeaderTimeout:      c.Client.ReadHeaderTimeout,
		IdleTimeout:            c.Client.IdleTimeout,
		BodyIdleTimeout:        c.Client.BodyIdleTimeout,
		BodyMinRate:            c.Client.BodyMinRate,
		H2MaxConcurrentStreams: c.Client.H2MaxConcurrentStreams,
		H2MaxResetsPerSecond:   c.Client.H2MaxResetsPerSecond,

		UnreachableRetry: TTLRules(c).WithDefaults().UnreachableRetry,
	}
}

// PolicyOptions returns the policy's options of c's reloadable keys: the
// identifier (identity.browser_tokens, identity.overrides), the
// destination lists, connect.* and mode; and usage.* (restart-only: a
// reload keeps the running values). The caller adds Cache, Pinner and
// Usage.Licenses. An override that does not compile is an error naming its key.
func PolicyOptions(c config.Config) (policy.Options, error) {
	overrides, err := compileOverrides(c.Identity.Overrides)
	if err != nil {
		return policy.Options{}, err
	}
	return policy.Options{
		Identifier:             identity.NewIdentifier(c.Identity.BrowserTokens, overrides),
		ExemptHosts:            c.ExemptHosts,
		AllowHosts:             c.AllowHosts,
		DenyHosts:              c.DenyHosts,
		ConnectPorts:           c.Connect.Ports,
		RefuseConnect:          c.Connect.Refuse,
		RequireConnectIdentity: c.Connect.RequireIdentity,
		Mode:                   policy.Mode(c.Mode),
		Usage:                  policy.UsageOptions{Enforce: c.Usage.Enforce, Declarations: UsageDeclarations(c)},
	}, nil
}

func compileOverrides(rules []config.OverrideRule) ([]identity.Override, error) {
	out := make([]identity.Override, 0, len(rules))
	for i, r := range rules {
		re, err := regexp.Compile(r.UserAgent)
		if err != nil {
			return nil, fmt.Errorf("identity.overrides[%d].user_agent: %w", i, err)
		}
		out = append(out, identity.Override{Pattern: re, Token: r.Token})
	}
	return out, nil
}

// AuditFileOptions returns the audit log file's options (log.file and its
// rotation, log.max_*).
func AuditFileOptions(c config.Config) audit.FileOptions {
	return audit.FileOptions{Path: c.Log.File, MaxSizeMB: c.Log.MaxSizeMB, MaxBackups: c.Log.MaxBackups,
		MaxAgeDays: c.Log.MaxAgeDays}
}

// ArchiveOptions returns the robots.txt archive's options
// (audit.archive_dir, audit.archive_max_mb, robots.max_bytes); the caller
// adds Log.
func ArchiveOptions(c config.Config) audit.ArchiveOptions {
	return audit.ArchiveOptions{Dir: c.Audit.ArchiveDir, MaxBytes: int64(c.Audit.ArchiveMaxMB) << 20,
		ParseLimit: parseOptions(c).Limit()}
}

// LicenseOptions returns the RSL license source's options: at most
// robots.max_bytes octets a license, cached with the robots.txt cache's
// bounds and TTL rules. The caller adds Fetcher and Record.
func LicenseOptions(c config.Config) license.SourceOptions {
	return license.SourceOptions{MaxBytes: parseOptions(c).Limit(), Cache: CacheOptions(c)}
}

// StoreOptions returns the shared store's options (shared.*, with the
// cache's TTL rules and robots.timeout, robots.max_bytes). The caller adds
// RecordKey (read from shared.record_key_file), Registerer and Log.
func StoreOptions(c config.Config) fleet.Options {
	return fleet.Options{
		URL:       c.Shared.RedisURL,
		KeyPrefix: c.Shared.KeyPrefix,
		LockTTL:   c.Shared.LockTTL,
		Timeout:   c.Shared.Timeout,
		PoolSize:  c.Shared.PoolSize,
		WaitFor:   c.Robots.Timeout,
		TTLRules:  TTLRules(c),
		Parse:     parseOptions(c),
	}
}

// SharedSchedulerOptions returns the back-off bounds of the fleet's
// shared politeness scheduler (politeness.default_backoff,
// politeness.max_backoff).
func SharedSchedulerOptions(c config.Config) fleet.SchedulerOptions {
	return fleet.SchedulerOptions{DefaultBackoff: c.Politeness.DefaultBackoff, MaxBackoff: c.Politeness.MaxBackoff}
}

// PaymentsTransport returns the paying step of payments.* without its
// runtime parts: the budgets (PaymentLimits) and payments.breach_block.
// The caller adds Next, Ledger and Log.
func PaymentsTransport(c config.Config) *payments.Transport {
	return &payments.Transport{Limits: PaymentLimits(c), BreachBlock: c.Payments.BreachBlock}
}
