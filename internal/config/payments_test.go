package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// pins are an identity.users entry (alice) and an identity.client_ranges
// entry (10.0.0.0/8) for payments entries to name.
const pins = `identity:
  users:
    - name: alice
      password_bcrypt: "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
      token: examplebot
  client_ranges:
    - cidr: 10.0.0.0/8
      token: rangebot
`

func TestLoadPaymentsErrorsNameTheKey(t *testing.T) {
	entry := func(sel, rest string) string {
		return pins + "payments:\n  enabled: true\n  identities:\n    - " + sel + "\n" + rest
	}
	amounts := "      max_price: \"0.05\"\n      budget: \"10\"\n      currency: USD\n"
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"no selector", pins + "payments:\n  identities:\n    - max_price: \"1\"\n      budget: \"1\"\n      currency: USD\n", []string{"payments.identities[0]", "exactly one"}},
		{"two selectors", entry("product_token: examplebot", "      default: true\n"+amounts), []string{"payments.identities[0]", "exactly one"}},
		{"bad token", entry("product_token: \"example bot\"", amounts), []string{"payments.identities[0].product_token"}},
		{"unknown user", entry("user: bob", amounts), []string{"payments.identities[0].user", "identity.users"}},
		{"unknown range", entry("client_range: 192.0.2.0/24", amounts), []string{"payments.identities[0].client_range"}},
		{"lower-case currency", entry("default: true", "      max_price: \"0.05\"\n      budget: \"10\"\n      currency: usd\n"), []string{"payments.identities[0].currency", "ISO 4217"}},
		{"no currency", entry("default: true", "      max_price: \"0.05\"\n      budget: \"10\"\n"), []string{"payments.identities[0].currency"}},
		{"negative price", entry("default: true", "      max_price: \"-0.05\"\n      budget: \"10\"\n      currency: USD\n"), []string{"payments.identities[0].max_price"}},
		{"seven decimals", entry("default: true", "      max_price: \"0.0000001\"\n      budget: \"10\"\n      currency: USD\n"), []string{"payments.identities[0].max_price", "decimal places"}},
		{"no budget", entry("default: true", "      max_price: \"0.05\"\n      currency: USD\n"), []string{"payments.identities[0].budget"}},
		{"max_price over budget", entry("default: true", "      max_price: \"2\"\n      budget: \"1.5\"\n      currency: USD\n"), []string{"payments.identities[0].max_price", "budget"}},
		{"same token twice", entry("product_token: examplebot", amounts+"    - product_token: ExampleBot\n"+amounts), []string{"payments.identities[1]", "token:examplebot"}},
		{"unknown key", pins + "payments:\n  enable: true\n", []string{"payments.enable"}},
		{"no breach block", pins + "payments:\n  breach_block: 0s\n", []string{"payments.breach_block", "1s"}},
		{"negative breach block", pins + "payments:\n  breach_block: -1h\n", []string{"payments.breach_block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("Load: no error, want one naming %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// payments.breach_block: 24h unless set, as written.
func TestLoadBreachBlock(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 24 * time.Hour, "payments:\n  breach_block: 90m\n": 90 * time.Minute} {
		c, err := config.Load(strings.NewReader(in))
		if err != nil || c.Payments.BreachBlock != want {
			t.Errorf("%q: breach_block %v, %v; want %v", in, c.Payments.BreachBlock, err, want)
		}
	}
}
