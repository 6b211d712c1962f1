package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// User is a proxy user whose requests are pinned to a product token.
type User struct {
	// Name is the user name of Proxy-Authorization: Basic.
	Name string
	// PasswordHash is the bcrypt hash of the password ("$2a$...", "$2b$",
	// "$2y$").
	PasswordHash []byte
	// Token is the product token the user's requests are decided as.
	Token string
	// Mode is how robots.txt denials of the user's requests are acted on;
	// "" means the policy's default (Options.Mode).
	Mode policy.Mode
	// Purposes are the usage purposes declared for the user's requests
	// (identity.users[].purposes); nil declares none.
	Purposes []string
}

// ClientRange pins the requests of clients whose address lies in Prefix.
type ClientRange struct {
	// Prefix is the client address range.
	Prefix netip.Prefix
	// Token is the product token the range's requests are decided as.
	Token string
	// Mode is how robots.txt denials of the range's requests are acted
	// on; "" means the policy's default (Options.Mode).
	Mode policy.Mode
	// Purposes are the usage purposes declared for the range's requests
	// (identity.client_ranges[].purposes); nil declares none.
	Purposes []string
}

// PinOptions configure a Pinner.
type PinOptions struct {
	// Users are the proxy users; names must be unique.
	Users []User
	// Ranges map client ranges to tokens; the longest prefix containing the
	// client wins.
	Ranges []ClientRange
	// Required answers requests that are neither authenticated nor from a
	// pinned range with policy.ErrProxyAuthRequired (HTTP 407).
	Required bool
	// Throttle limits failed credential checks and concurrent bcrypt
	// comparisons; the zero value limits nothing.
	Throttle ThrottleOptions
	// Now is the clock of the throttle; default time.Now.
	Now func() time.Time
}

// verifiedMax bounds the credentials a Pinner remembers as verified.
const verifiedMax = 1024

// Pinner resolves pinned identities from proxy credentials and client
// addresses. It is safe for concurrent use.
//
// bcrypt is slow on purpose (tens of milliseconds per check), so a
// successful check is remembered, by the SHA-256 of the whole header value,
// for the Pinner's lifetime (bounded; cleared when full); a remembered
// header is answered first, without bcrypt and without throttling. Failed
// checks are never remembered: each one costs the full bcrypt time, so
// they are throttled per client address and per user name before bcrypt
// runs (ThrottleOptions), and bcrypt runs in at most
// ThrottleOptions.MaxConcurrentChecks goroutines at once.
type Pinner struct {
	users    map[string]policy.Pin
	hashes   map[string][]byte
	ranges   []ClientRange // longest prefix first
	required bool
	dummy    []byte              // compared against for unknown users, to even out timing
	throttle *throttle           // nil when not throttling
	checks   *semaphore.Weighted // nil when bcrypt is not bounded
	bcrypt   func(hash, password []byte) error

	verified *memo.Sync[[sha256.Size]byte, policy.Pin]
	// flights coalesces concurrent checks of one header: a crawler that
	// opens many connections with the same credentials at once runs one
	// bcrypt check and takes one throttle token, not one each.
	flights singleflight.Group
}

// NewPinner validates the options and returns a Pinner. Errors name the
// offending user, range or throttle option: a duplicate or empty name, a
// hash that is not bcrypt, a token that is not a product token (RFC 9309
// 2.2.1), a negative rate or bound.
func NewPinner(o PinOptions) (*Pinner, error) {
	if err := o.Throttle.validate(); err != nil {
		return nil, fmt.Errorf("auth throttle: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Pinner{users: map[string]policy.Pin{}, hashes: map[string][]byte{}, required: o.Required,
		verified: memo.NewSync[[sha256.Size]byte, policy.Pin](verifiedMax), throttle: newThrottle(o.Throttle, o.Now),
		checks: newChecks(o.Throttle.MaxConcurrentChecks), bcrypt: bcrypt.CompareHashAndPassword}
	for i, u := range o.Users {
		if err := checkUser(u, p.users); err != nil {
			return nil, fmt.Errorf("user %d (%q): %w", i, u.Name, err)
		}
		p.users[u.Name] = newPin(u.Token, policy.SourceCredentials, u.Name, u.Mode, slices.Clone(u.Purposes))
		p.hashes[u.Name] = u.PasswordHash
		p.dummy = u.PasswordHash
	}
	for i, r := range o.Ranges {
		if !r.Prefix.IsValid() || !robots.IsProductToken(r.Token) {
			return nil, fmt.Errorf("client range %d (%s): invalid range or product token %q", i, r.Prefix, r.Token)
		}
		p.ranges = append(p.ranges, ClientRange{Prefix: unmapPrefix(r.Prefix).Masked(), Token: r.Token, Mode: r.Mode,
			Purposes: slices.Clone(r.Purposes)})
	}
	slices.SortStableFunc(p.ranges, func(a, b ClientRange) int { return b.Prefix.Bits() - a.Prefix.Bits() })
	return p, nil
}

func checkUser(u User, seen map[string]policy.Pin) error {
	switch {
	case u.Name == "" || strings.Contains(u.Name, ":"):
		return errors.New("name must be non-empty and contain no colon")
	case seen[u.Name].Token != "":
		return errors.New("duplicate name")
	case !robots.IsProductToken(u.Token):
		return fmt.Errorf("product token %q must be letters, '_' and '-'", u.Token)
	}
	if _, err := bcrypt.Cost(u.PasswordHash); err != nil {
		return fmt.Errorf("password hash: %w", err)
	}
	return nil
}

func newPin(token string, source policy.IdentitySource, user string, mode policy.Mode, purposes []string) policy.Pin {
	return policy.Pin{Token: token, Source: source, User: user, Mode: mode, Purposes: purposes, Candidates: []string{token}}
}

// Enabled reports whether the Pinner pins or requires anything.
func (p *Pinner) Enabled() bool {
	return p != nil && (len(p.users) > 0 || len(p.ranges) > 0 || p.required)
}

// Pin resolves the pinned identity of a request from its Proxy-Authorization
// header value ("" when absent) and the client's address (invalid when
// unknown). Credentials come first, then the client range. A header that is
// present but wrong is always an error wrapping policy.ErrProxyAuthFailed, even
// when authentication is not required; no pin at all is an error wrapping
// policy.ErrProxyAuthRequired only when authentication is required. With no users
// configured the header is ignored (it may be meant for a proxy further
// along a chain). On
// policy.ErrProxyAuthFailed the returned Pin's User names the user tried, if any.
//
// A header that is not remembered as verified is refused with a
// *ThrottledError (wrapping policy.ErrProxyAuthThrottled) before it is checked
// when the client's or the user's failures are used up. While waiting for
// a bcrypt slot the check ends with ctx (an error wrapping
// policy.ErrProxyAuthFailed and ctx.Err()).
func (p *Pinner) Pin(ctx context.Context, proxyAuthorization string, client netip.Addr) (policy.Pin, error) {
	if p == nil {
		return policy.Pin{}, nil
	}
	if proxyAuthorization != "" && len(p.users) > 0 {
		return p.authenticate(ctx, proxyAuthorization, client)
	}
	if r := p.rangeOf(client); r != nil {
		return newPin(r.Token, policy.SourceClientRange, "", r.Mode, r.Purposes), nil
	}
	if p.required {
		return policy.Pin{}, policy.ErrProxyAuthRequired
	}
	return policy.Pin{}, nil
}

// authenticate checks Basic credentials (RFC 7617) against the users: the
// memo first, then the throttle, then bcrypt. A malformed header counts as
// a failure of the client (it costs no bcrypt).
// RangeOf returns the configured client range that pins client's
// requests (the longest prefix containing it), and false when none does.
func (p *Pinner) RangeOf(client netip.Addr) (netip.Prefix, bool) {
	if p == nil {
		return netip.Prefix{}, false
	}
	if r := p.rangeOf(client); r != nil {
		return r.Prefix, true
	}
	return netip.Prefix{}, false
}

// rangeOf returns the range that pins client, nil when none does.
func (p *Pinner) rangeOf(client netip.Addr) *ClientRange {
	client = client.Unmap().WithZone("") // Prefix.Contains is false for zoned addresses
	for i := range p.ranges {
		if p.ranges[i].Prefix.Contains(client) {
			return &p.ranges[i]
		}
	}
	return nil
}

func (p *Pinner) authenticate(ctx context.Context, header string, client netip.Addr) (policy.Pin, error) {
	sum := sha256.Sum256([]byte(header))
	if pin, ok := p.verified.Get(sum); ok {
		return pin, nil
	}
	// The check is shared by every login with this header: it runs on a
	// context of its own (bounded by authCheckTimeout), so that the first
	// caller giving up fails only that caller.
	ch := p.flights.DoChan(string(sum[:]), func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), authCheckTimeout)
		defer cancel()
		return p.check(cctx, header, sum, client)
	})
	select {
	case r := <-ch:
		return r.Val.(policy.Pin), r.Err
	case <-ctx.Done():
		return policy.Pin{}, fmt.Errorf("%w: waiting for a password check: %w", policy.ErrProxyAuthFailed, context.Cause(ctx))
	}
}

// authCheckTimeout bounds one shared password check: the wait for a
// bcrypt slot and the comparison.
const authCheckTimeout = 30 * time.Second

// check is authenticate for a header that is not remembered: the
// throttle, then bcrypt, then the memo.
func (p *Pinner) check(ctx context.Context, header string, sum [sha256.Size]byte, client netip.Addr) (policy.Pin, error) {
	name, password, err := parseBasic(header)
	done, retry := p.throttle.admit(client, name, err == nil)
	if retry > 0 {
		return policy.Pin{User: name}, &policy.ThrottledError{RetryAfter: retry}
	}
	if err != nil {
		done(true)
		return policy.Pin{}, fmt.Errorf("%w: %v", policy.ErrProxyAuthFailed, err)
	}
	hash, known := p.hashes[name]
	if !known {
		hash = p.dummy // to even out timing; no password matches for an unknown user
	}
	match, err := p.compare(ctx, hash, password)
	switch {
	case err != nil:
		done(false) // nothing was checked
		return policy.Pin{User: name}, fmt.Errorf("%w: %w", policy.ErrProxyAuthFailed, err)
	case !known:
		done(true)
		return policy.Pin{User: name}, fmt.Errorf("%w: unknown user %q", policy.ErrProxyAuthFailed, name)
	case !match:
		done(true)
		return policy.Pin{User: name}, fmt.Errorf("%w: wrong password for user %q", policy.ErrProxyAuthFailed, name)
	}
	done(false)
	pin := p.users[name]
	p.verified.Put(sum, pin)
	return pin, nil
}

// parseBasic decodes "Basic base64(user:password)"; the scheme is
// case-insensitive (RFC 7617 2, RFC 9110 11.1).
func parseBasic(header string) (user, password string, err error) {
	scheme, creds, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return "", "", errors.New("not Basic credentials")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(creds))
	if err != nil {
		return "", "", errors.New("credentials are not base64")
	}
	user, password, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", errors.New("credentials have no colon")
	}
	return user, password, nil
}

// unmapPrefix turns an IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) into
// its IPv4 form (10.0.0.0/8): client addresses are unmapped before they are
// matched.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}
