package payments

import "github.com/robotsproxy/robotsproxy/internal/money"

// Amount is a sum of money in millionths of its currency's unit
// (money.Amount).
type Amount = money.Amount

// Price is an amount in a currency, as pay per crawl writes it: "USD
// 0.01" (money.Price).
type Price = money.Price

// MaxAmount is the largest Amount (money.MaxAmount).
const MaxAmount = money.MaxAmount

// ParseAmount reads a non-negative decimal amount such as "0.01"
// (money.ParseAmount).
func ParseAmount(s string) (Amount, error) { return money.ParseAmount(s) }

// ParsePrice reads "CUR AMOUNT" such as "USD 0.01" (money.ParsePrice).
func ParsePrice(s string) (Price, error) { return money.ParsePrice(s) }
