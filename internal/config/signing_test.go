package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

func TestLoadSigning(t *testing.T) {
	h := testHash(t, "pw")
	pins := "identity:\n  users:\n    - name: alice\n      password_bcrypt: \"" + h + "\"\n      token: AliceBot\n" +
		"  client_ranges:\n    - cidr: 10.8.0.0/16\n      token: RangeBot\n"
	id := func(sel string, extra ...string) string {
		return "    - " + sel + "\n      keys: [/k/a, /k/b]\n      signature_agent: https://crawler.example\n" + strings.Join(extra, "")
	}
	sign := func(ids ...string) string {
		return pins + "signing:\n  enabled: true\n  identities:\n" + strings.Join(ids, "")
	}
	tests := []struct {
		name string
		in   string
		want []string // "" for valid
	}{
		{"valid", sign(id("product_token: ExampleBot"), id("user: alice"), id("client_range: 10.8.1.0/16"), id("default: true",
			"      active: /k/b\n      card:\n        name: Example\n        purpose: search\n        contact: mailto:a@example.com\n        description: d\n")), nil},
		{"off and empty", "signing:\n  enabled: false\n", nil},
		{"enabled without identities", "signing:\n  enabled: true\n", []string{"signing.identities"}},
		{"no selector", sign("    - keys: [/k/c]\n      signature_agent: https://crawler.example\n"), []string{"signing.identities[0]", "exactly one"}},
		{"two selectors", sign(id("product_token: A\n      default: true")), []string{"signing.identities[0]", "exactly one"}},
		{"bad token", sign(id("product_token: Bot/1.0")), []string{"signing.identities[0].product_token", "Bot/1.0"}},
		{"unknown user", sign(id("user: bob")), []string{"signing.identities[0].user", "bob"}},
		{"unknown range", sign(id("client_range: 10.9.0.0/16")), []string{"signing.identities[0].client_range"}},
		{"bad range", sign(id("client_range: ten")), []string{"signing.identities[0].client_range"}},
		{"duplicate token", sign(id("product_token: ExampleBot"), id("product_token: examplebot")), []string{"signing.identities[1]", "signing.identities[0]"}},
		{"two defaults", sign(id("default: true"), id("default: true")), []string{"signing.identities[1]"}},
		{"no keys", sign("    - default: true\n      signature_agent: https://crawler.example\n"), []string{"signing.identities[0].keys"}},
		{"repeated key", sign("    - default: true\n      keys: [/k/a, /k/a]\n      signature_agent: https://crawler.example\n"), []string{"signing.identities[0].keys[1]"}},
		{"active not a key", sign(id("default: true", "      active: /k/z\n")), []string{"signing.identities[0].active", "/k/z"}},
		{"no agent", sign("    - default: true\n      keys: [/k/a]\n"), []string{"signing.identities[0].signature_agent"}},
		{"http agent", sign("    - default: true\n      keys: [/k/a]\n      signature_agent: http://crawler.example\n"), []string{"signing.identities[0].signature_agent", "https"}},
		{"bad contact", sign(id("default: true", "      card:\n        contact: call me\n")), []string{"signing.identities[0].card.contact"}},
		{"card key misspelt", sign(id("default: true", "      card:\n        nmae: x\n")), []string{"nmae"}},
		{"label not a key", "signing:\n  label: Robots Proxy\n", []string{"signing", "label"}},
		{"empty label", "signing:\n  label: \"\"\n", []string{"signing.label"}},
		{"expires over a day", "signing:\n  expires: 25h\n", []string{"signing", "expires"}},
		{"expires zero", "signing:\n  expires: 0s\n", []string{"signing.expires"}},
		{"body bound zero", "signing:\n  max_body_bytes: 0\n", []string{"signing.max_body_bytes"}},
		{"bad directory listen", "signing:\n  directory_listen: 8443\n", []string{"signing.directory_listen"}},
		{"directory authority with a scheme", "signing:\n  directory_authorities: [https://crawler.example]\n", []string{"signing.directory_authorities[0]", "HOST or HOST:PORT"}},
		{"directory authority with a path", "signing:\n  directory_authorities: [ok.example, crawler.example/keys]\n", []string{"signing.directory_authorities[1]"}},
		{"empty directory authority", "signing:\n  directory_authorities: [\"\"]\n", []string{"signing.directory_authorities[0]", "empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tc.in))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if tc.name == "valid" && (cfg.Signing.Identities[0].ActiveKey() != "/k/a" || cfg.Signing.Identities[3].ActiveKey() != "/k/b") {
					t.Errorf("active keys %q, %q", cfg.Signing.Identities[0].ActiveKey(), cfg.Signing.Identities[3].ActiveKey())
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one naming %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestSigningDefaults(t *testing.T) {
	s := config.Default().Signing
	if s.Enabled || s.Label != "robotsproxy" || s.Expires != time.Minute || s.MaxBodyBytes != 4<<20 || s.DirectoryListen != "" || len(s.Identities) != 0 {
		t.Errorf("Default().Signing = %+v", s)
	}
}
