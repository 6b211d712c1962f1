// Package money holds the exact sums of pay per crawl: decimal amounts
// kept as integers in millionths of a currency unit, prices as
// "USD 0.01", and ISO 4217 currency codes. The configuration
// (payments.identities[].max_price, budget, currency) and the runtime
// (payments, the fleet's spend ledger) read and check them with the same
// functions.
package money

import (
	"errors"
	"fmt"
	"strings"
)

// Scale is the number of decimal places an Amount keeps: amounts are
// counted in millionths of the currency's unit, so that every price and
// budget is an exact integer (no floating point).
const Scale = 6

// unit is one currency unit in Amount's millionths.
const unit = 1_000_000

// MaxAmount is the largest Amount: 10^9 currency units. Sums of amounts
// below it stay exact in a Lua number of the shared store (2^53).
const MaxAmount Amount = 1_000_000_000 * unit

// Amount is a sum of money in millionths of its currency's unit
// (0.01 USD is 10000). The zero Amount is nothing.
type Amount int64

// ParseAmount reads a non-negative decimal amount such as "0.01", "1" or
// "12.5": ASCII digits, at most one ".", at most Scale digits after it,
// no sign, no exponent, at most MaxAmount. Errors say what is wrong.
func ParseAmount(s string) (Amount, error) {
	whole, frac, dot := strings.Cut(s, ".")
	switch {
	case whole == "" || (dot && frac == ""):
		return 0, fmt.Errorf("amount %q: want a decimal such as 0.01", s)
	case len(frac) > Scale:
		return 0, fmt.Errorf("amount %q: at most %d decimal places", s, Scale)
	case len(whole) > 10:
		return 0, fmt.Errorf("amount %q: more than %d", s, MaxAmount/unit)
	}
	var a int64
	for _, c := range whole + frac + strings.Repeat("0", Scale-len(frac)) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("amount %q: want ASCII digits and one \".\"", s)
		}
		a = a*10 + int64(c-'0')
	}
	if Amount(a) > MaxAmount {
		return 0, fmt.Errorf("amount %q: more than %d", s, MaxAmount/unit)
	}
	return Amount(a), nil
}

// String formats a as a decimal with as few decimal places as it needs
// and never fewer than two when it has a fraction ("0.01", "1", "0.125").
func (a Amount) String() string {
	sign := ""
	if a < 0 {
		sign, a = "-", -a
	}
	whole, frac := int64(a)/unit, int64(a)%unit
	if frac == 0 {
		return fmt.Sprintf("%s%d", sign, whole)
	}
	f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	if len(f) < 2 {
		f += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, whole, f)
}

// Price is an amount in a currency, as pay per crawl writes it in
// crawler-price, crawler-exact-price, crawler-max-price and
// crawler-charged: "USD 0.01".
type Price struct {
	// Currency is the ISO 4217 code, three upper-case ASCII letters.
	Currency string
	// Amount is the sum.
	Amount Amount
}

// ParsePrice reads "CUR AMOUNT" (a three-letter ISO 4217 code, one
// space, a decimal amount, see ParseAmount), surrounding white space
// ignored.
func ParsePrice(s string) (Price, error) {
	cur, amt, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return Price{}, fmt.Errorf("price %q: want a currency code and an amount, such as \"USD 0.01\"", s)
	}
	if err := CheckCurrency(cur); err != nil {
		return Price{}, fmt.Errorf("price %q: %w", s, err)
	}
	a, err := ParseAmount(amt)
	if err != nil {
		return Price{}, fmt.Errorf("price %q: %w", s, err)
	}
	return Price{Currency: cur, Amount: a}, nil
}

// String is p as a header field value: "USD 0.01".
func (p Price) String() string { return p.Currency + " " + p.Amount.String() }

// CheckCurrency checks that code has the form of an ISO 4217 alphabetic
// code: three upper-case ASCII letters. Whether the code is assigned is
// not checked.
func CheckCurrency(code string) error {
	if len(code) != 3 {
		return errors.New("currency: want a three-letter ISO 4217 code such as USD")
	}
	for i := 0; i < 3; i++ {
		if code[i] < 'A' || code[i] > 'Z' {
			return fmt.Errorf("currency %q: want three upper-case letters (ISO 4217)", code)
		}
	}
	return nil
}
