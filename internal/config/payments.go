package config

import (
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/money"
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
	// BreachBlock is how long no payment goes to a host after it breached
	// the protocol: charged more than the crawler-exact-price agreed (or
	// in another currency), or charged on an answer no price was agreed
	// for. Default 24h; at least 1s.
	BreachBlock time.Duration `yaml:"breach_block"`
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
// (Selector.Name). Call after Validate.
func (p PaymentIdentity) Name() string { return p.Selector().Name() }

// validatePayments checks the payments.* keys. Errors name the key.
func (c *Config) validatePayments() error {
	if c.Payments.BreachBlock < time.Second {
		return fmt.Errorf("payments.breach_block: %v is less than 1s: a host that breached the protocol must stay blocked", c.Payments.BreachBlock)
	}
	seen := map[string]bool{}
	for i, p := range c.Payments.Identities {
		key := fmt.Sprintf("payments.identities[%d]", i)
		if err := c.checkSelector(p.Selector()); err != nil {
			return fmt.Errorf("%s.%w", key, err)
		}
		if seen[p.Name()] {
			return fmt.Errorf("%s: a second budget for %s", key, p.Name())
		}
		seen[p.Name()] = true
		if err := money.CheckCurrency(p.Currency); err != nil {
			return fmt.Errorf("%s.currency: %w", key, err)
		}
		maxPrice, err := money.ParseAmount(p.MaxPrice)
		if err != nil {
			return fmt.Errorf("%s.max_price: %w", key, err)
		}
		budget, err := money.ParseAmount(p.Budget)
		if err != nil {
			return fmt.Errorf("%s.budget: %w", key, err)
		}
		if maxPrice > budget {
			return fmt.Errorf("%s.max_price: %s is more than the budget %s: no request could be paid", key, p.MaxPrice, p.Budget)
		}
	}
	return nil
}
