package config

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/robotsproxy/robotsproxy/egress"
	"github.com/robotsproxy/robotsproxy/identity"
	"github.com/robotsproxy/robotsproxy/payments"
)

// Payments configures pay per crawl (docs/payments.md): robotsproxy pays
// a 402 whose crawler-price is within the identity's max_price and what is
// left of its budget for the UTC day, and retries once with
// crawler-exact-price. Off by default; a restart applies a change.
type Payments struct {
	// Enabled turns paying on. Default false: 402 answers reach the
	// client as the origin sent them, and no request is changed.
	Enabled bool `yaml:"enabled"`
	// Identities are the budgets, each for exactly one of a product
	// token, a proxy user, a client range or the default; the most
	// specific one applies (user, client range, product token, default).
	// An identity without one pays nothing. Default none.
	Identities []PaymentIdentity `yaml:"identities"`
}

// PaymentIdentity is one budget. Amounts are decimal strings ("0.01"),
// with at most six decimal places, kept exact.
type PaymentIdentity struct {
	// ProductToken names the crawler (case-insensitive, RFC 9309 2.2.1).
	ProductToken string `yaml:"product_token"`
	// User names an identity.users entry.
	User string `yaml:"user"`
	// ClientRange names an identity.client_ranges entry by its cidr.
	ClientRange string `yaml:"client_range"`
	// Default makes this the budget of every identity no other entry
	// names; they share it.
	Default bool `yaml:"default"`
	// MaxPrice is the most one request may cost. Required.
	MaxPrice string `yaml:"max_price"`
	// Budget is the most spent per UTC day, across the fleet when
	// shared.redis_url is set. Required; at least max_price.
	Budget string `yaml:"budget"`
	// Currency is the ISO 4217 code of both amounts, e.g. USD. Required.
	Currency string `yaml:"currency"`
}

// Name is the budget's name in the spend ledger and its keys
// ("token:examplebot", "user:alice", "range:10.0.0.0/8", "default").
// Call after Validate.
func (p PaymentIdentity) Name() string {
	switch {
	case p.User != "":
		return "user:" + p.User
	case p.ClientRange != "":
		pr, _ := netip.ParsePrefix(p.ClientRange)
		return "range:" + pr.Masked().String()
	case p.ProductToken != "":
		return "token:" + egress.TokenKey(p.ProductToken)
	}
	return "default"
}

// Limit returns the entry's payments.Limit. Call after Validate.
func (p PaymentIdentity) Limit() payments.Limit {
	maxPrice, _ := payments.ParseAmount(p.MaxPrice)
	budget, _ := payments.ParseAmount(p.Budget)
	return payments.Limit{Budget: p.Name(), Currency: p.Currency, MaxPrice: maxPrice, PerDay: budget}
}

// validatePayments checks the payments.* keys. Errors name the key.
func (c *Config) validatePayments() error {
	seen := map[string]bool{}
	for i, p := range c.Payments.Identities {
		key := fmt.Sprintf("payments.identities[%d]", i)
		if err := c.paymentSelector(key, p); err != nil {
			return err
		}
		if seen[p.Name()] {
			return fmt.Errorf("%s: a second budget for %s", key, p.Name())
		}
		seen[p.Name()] = true
		if err := payments.CheckCurrency(p.Currency); err != nil {
			return fmt.Errorf("%s.currency: %w", key, err)
		}
		maxPrice, err := payments.ParseAmount(p.MaxPrice)
		if err != nil {
			return fmt.Errorf("%s.max_price: %w", key, err)
		}
		budget, err := payments.ParseAmount(p.Budget)
		if err != nil {
			return fmt.Errorf("%s.budget: %w", key, err)
		}
		if maxPrice > budget {
			return fmt.Errorf("%s.max_price: %s is more than the budget %s: no request could be paid", key, p.MaxPrice, p.Budget)
		}
	}
	return nil
}

// paymentSelector checks that p names exactly one identity, and one that
// can occur.
func (c *Config) paymentSelector(key string, p PaymentIdentity) error {
	n := 0
	for _, set := range []bool{p.ProductToken != "", p.User != "", p.ClientRange != "", p.Default} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New(key + ": name exactly one of product_token, user, client_range or default: true")
	}
	switch {
	case p.ProductToken != "" && !identity.IsProductToken(p.ProductToken):
		return fmt.Errorf("%s.product_token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", key, p.ProductToken)
	case p.User != "" && !c.hasUser(p.User):
		return fmt.Errorf("%s.user: %q is not in identity.users", key, p.User)
	case p.ClientRange != "" && !c.hasRange(p.ClientRange):
		return fmt.Errorf("%s.client_range: %q is not the cidr of an identity.client_ranges entry", key, p.ClientRange)
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
