package policy

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Identity is who a request's crawler is, in RFC 9309 terms.
type Identity struct {
	// Token is the crawler's primary product token (the first candidate),
	// or "*" when it has none.
	Token string
	// Candidates are the crawler's product tokens in the order found, each
	// a name that can match a group (robots.IsAgentName: an RFC 9309
	// product token, or a whole name such as "MJ12bot" that a user-agent
	// line may name); the groups of every one of them apply, merged.
	// Empty means "*".
	Candidates []string
	// Source says how the tokens were found.
	Source IdentitySource
	// User is the authenticated proxy user when Source is
	// SourceCredentials, else "".
	User string
}

// IdentitySource says how a crawler's product token was found: the audit
// line's token_source.
type IdentitySource string

const (
	// SourceOverride: an operator's User-Agent override matched.
	SourceOverride IdentitySource = "override"
	// SourceUserAgent: the tokens were read from the User-Agent header.
	SourceUserAgent IdentitySource = "user-agent"
	// SourceCatalogue: the token is the name the crawler catalogue gives
	// the crawler it recognised in the User-Agent header, a name the
	// header's products alone did not give first: "Slurp" for
	// "Mozilla/5.0 (compatible; Yahoo! Slurp; ...)", "ips-agent" rather
	// than "Fedora".
	SourceCatalogue IdentitySource = "catalogue"
	// SourceDefault: no User-Agent header, or no crawler token in it; the
	// crawler obeys the "*" group (RFC 9309 2.2.1).
	SourceDefault IdentitySource = "default"
	// SourceCredentials: the client authenticated with
	// Proxy-Authorization as a configured user, whose product token is
	// pinned. Pinned sources come before every other: a pinned product
	// token overrides whatever User-Agent the client sends.
	SourceCredentials IdentitySource = "credentials"
	// SourceClientRange: the client's address lies in a configured range
	// whose product token is pinned.
	SourceClientRange IdentitySource = "client-range"
)

// Identifier finds a crawler's identity in its User-Agent header value
// (the product tokens of RFC 9309 2.2.1, after the operator's overrides).
// The robotsproxy server's reads them by the RFC 9110 User-Agent grammar,
// leaving out browser tokens. Implementations are safe for concurrent
// use.
type Identifier interface {
	// Identify returns the identity of the crawler whose User-Agent
	// header value is userAgent ("" when absent): Source SourceDefault
	// and Token "*" when it names none. The Candidates slice may be
	// shared: callers do not modify it.
	Identify(userAgent string) Identity
}

// Pin is a pinned identity: the product token, mode and usage purposes an
// operator pins to proxy credentials or a client address range. The zero
// Pin pins nothing.
type Pin struct {
	// Token is the pinned product token, "" when nothing is pinned.
	Token string
	// Source is SourceCredentials or SourceClientRange.
	Source IdentitySource
	// User is the authenticated user name, "" unless Source is
	// SourceCredentials.
	User string
	// Mode is the pinned identity's mode, "" for the policy's default.
	Mode Mode
	// Purposes are the usage purposes declared for the pinned identity,
	// nil for none. Shared by every pin of the same user or range: read
	// only.
	Purposes []string
	// Candidates is []string{Token}, shared by every pin of the same user
	// or range, so that Identity allocates nothing; nil makes Identity
	// build it. Read only.
	Candidates []string
}

// Identity returns the identity a pin stands for.
func (p Pin) Identity() Identity {
	c := p.Candidates
	if c == nil && p.Token != "" {
		c = []string{p.Token}
	}
	return Identity{Token: p.Token, Candidates: c, Source: p.Source, User: p.User}
}

// Pinner resolves pinned identities from proxy credentials and client
// addresses (the robotsproxy server's are identity.users and
// identity.client_ranges). Implementations are safe for concurrent use.
type Pinner interface {
	// Pin resolves the pinned identity of a request from its
	// Proxy-Authorization header value ("" when absent) and the client's
	// address (invalid when unknown). Its error wraps
	// ErrProxyAuthRequired (HTTP 407), ErrProxyAuthFailed (HTTP 407; the
	// returned Pin's User names the user tried, if any) or, as a
	// *ThrottledError, ErrProxyAuthThrottled (HTTP 429).
	Pin(ctx context.Context, proxyAuthorization string, client netip.Addr) (Pin, error)
	// RangeOf returns the client range that pins client's requests, and
	// false when none does.
	RangeOf(client netip.Addr) (netip.Prefix, bool)
}

var (
	// ErrProxyAuthRequired: authentication is required and the request
	// carries no Proxy-Authorization header and comes from no pinned range.
	ErrProxyAuthRequired = errors.New("proxy authentication required")
	// ErrProxyAuthFailed: the Proxy-Authorization header is malformed, not
	// Basic, names an unknown user or has the wrong password.
	ErrProxyAuthFailed = errors.New("proxy authentication failed")
	// ErrProxyAuthThrottled: the client address or the user name has used
	// up its failed checks; the credentials were not checked. Errors
	// wrapping it are *ThrottledError.
	ErrProxyAuthThrottled = errors.New("proxy authentication throttled")
)

// ThrottledError refuses a credential check before bcrypt runs.
type ThrottledError struct {
	// RetryAfter is how long until the emptier bucket holds a token again.
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%v: too many failed attempts, retry in %v", ErrProxyAuthThrottled, e.RetryAfter.Round(time.Millisecond))
}

// Unwrap returns ErrProxyAuthThrottled.
func (e *ThrottledError) Unwrap() error { return ErrProxyAuthThrottled }
