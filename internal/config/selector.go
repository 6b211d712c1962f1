package config

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Selector names the identity an egress setting applies to (an entry of
// signing.identities or payments.identities): exactly one of a product
// token, a proxy user (identity.users), a client range
// (identity.client_ranges) and the default. The most specific applies:
// user, client range, product token, default (the server maps each
// entry into an egress.Table).
type Selector struct {
	ProductToken, User, ClientRange string
	Default                         bool
}

// Selector returns the identity the entry selects.
func (s SigningIdentity) Selector() Selector {
	return Selector{ProductToken: s.ProductToken, User: s.User, ClientRange: s.ClientRange, Default: s.Default}
}

// Selector returns the identity the entry selects.
func (p PaymentIdentity) Selector() Selector {
	return Selector{ProductToken: p.ProductToken, User: p.User, ClientRange: p.ClientRange, Default: p.Default}
}

// Name is the selected identity as one string, the same for entries that
// select the same requests: "token:examplebot" (lower case, RFC 9309
// 2.2.1), "user:alice", "range:10.0.0.0/8" (masked) or "default". Call
// after checkSelector.
func (s Selector) Name() string {
	switch {
	case s.User != "":
		return "user:" + s.User
	case s.ClientRange != "":
		return "range:" + s.Range().String()
	case s.ProductToken != "":
		return "token:" + rules.TokenKey(s.ProductToken)
	}
	return "default"
}

// Range is the selected client range, masked; the zero Prefix when none
// (or one that does not parse: call after checkSelector).
func (s Selector) Range() netip.Prefix {
	p, err := netip.ParsePrefix(s.ClientRange)
	if err != nil {
		return netip.Prefix{}
	}
	return p.Masked()
}

// checkSelector checks that s names exactly one identity, and one that
// can occur: a product token (RFC 9309 2.2.1), a user of identity.users,
// the cidr of an identity.client_ranges entry. Errors start with the key
// at fault, relative to the entry ("product_token: ...").
func (c *Config) checkSelector(s Selector) error {
	n := 0
	for _, set := range []bool{s.ProductToken != "", s.User != "", s.ClientRange != "", s.Default} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return errors.New("product_token: name exactly one of product_token, user, client_range and default: true")
	case s.ProductToken != "" && !robots.IsProductToken(s.ProductToken):
		return fmt.Errorf("product_token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", s.ProductToken)
	case s.User != "" && !c.hasUser(s.User):
		return fmt.Errorf("user: %q is not one of identity.users", s.User)
	case s.ClientRange != "" && !c.hasRange(s.ClientRange):
		return fmt.Errorf("client_range: %q is not the cidr of an identity.client_ranges entry (a CIDR range such as 10.0.0.0/8)", s.ClientRange)
	}
	return nil
}

func (c *Config) hasUser(name string) bool {
	for _, u := range c.Identity.Users {
		if u.Name == name {
			return true
		}
	}
	return false
}

// hasRange reports whether cidr is, masked, the range of an
// identity.client_ranges entry.
func (c *Config) hasRange(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	for _, r := range c.Identity.ClientRanges {
		if q, err := netip.ParsePrefix(r.CIDR); err == nil && q.Masked() == p.Masked() {
			return true
		}
	}
	return false
}

// TokenOf returns the product token the selected identity is decided for
// when it names one: its own, or the one its user or client range is
// pinned to; "" for the default.
func (c *Config) TokenOf(s Selector) string {
	switch {
	case s.ProductToken != "":
		return s.ProductToken
	case s.User != "":
		for _, u := range c.Identity.Users {
			if u.Name == s.User {
				return u.Token
			}
		}
	case s.ClientRange != "":
		for _, r := range c.Identity.ClientRanges {
			if q, err := netip.ParsePrefix(r.CIDR); err == nil && q.Masked() == s.Range() {
				return r.Token
			}
		}
	}
	return ""
}
