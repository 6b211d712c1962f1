package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
)

// paymentPins are an identity.users entry (alice) and an identity.client_ranges
// entry (10.0.0.0/8) for payments entries to name.
const paymentPins = `identity:
  users:
    - name: alice
      password_bcrypt: "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
      token: examplebot
  client_ranges:
    - cidr: 10.0.0.0/8
      token: rangebot
`

// TestPaymentLimit: each payments.identities entry becomes the budget
// of its selected identity, amounts exact.
func TestPaymentLimit(t *testing.T) {
	in := paymentPins + `payments:
  enabled: true
  identities:
    - product_token: ExampleBot
      max_price: 0.05
      budget: "12.50"
      currency: USD
    - user: alice
      max_price: "1"
      budget: "1"
      currency: EUR
    - client_range: 10.1.0.0/8
      max_price: "0"
      budget: "0"
      currency: USD
    - default: true
      max_price: "0.001"
      budget: "0.01"
      currency: JPY
`
	cfg, err := config.Load(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Payments.Enabled || len(cfg.Payments.Identities) != 4 {
		t.Fatalf("payments %+v", cfg.Payments)
	}
	var got []payments.Limit
	for _, p := range cfg.Payments.Identities {
		got = append(got, paymentLimit(p))
	}
	want := []payments.Limit{
		{Budget: "token:examplebot", Currency: "USD", MaxPrice: 50_000, PerDay: 12_500_000},
		{Budget: "user:alice", Currency: "EUR", MaxPrice: 1_000_000, PerDay: 1_000_000},
		{Budget: "range:10.0.0.0/8", Currency: "USD"},
		{Budget: "default", Currency: "JPY", MaxPrice: 1_000, PerDay: 10_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limits\n got %+v\nwant %+v", got, want)
	}
	if d := config.Default(); d.Payments.Enabled || len(d.Payments.Identities) != 0 {
		t.Errorf("default payments %+v, want off", d.Payments)
	}
}
