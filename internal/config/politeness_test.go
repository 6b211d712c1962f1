package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

const hash = "$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BQTnGpx5f5Bqtfd2PaZ8kpm1V.Ka"

func TestLoadPolitenessErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"crawl_delay", "politeness:\n  crawl_delay: obey\n", []string{"politeness.crawl_delay", "obey"}},
		{"max_crawl_delay zero", "politeness:\n  max_crawl_delay: 0s\n", []string{"politeness.max_crawl_delay"}},
		{"default_delay above the cap", "politeness:\n  max_crawl_delay: 5s\n  default_delay: 6s\n", []string{"politeness.default_delay"}},
		{"default_delay negative", "politeness:\n  default_delay: -1s\n", []string{"politeness.default_delay"}},
		{"on_early", "politeness:\n  on_early: drop\n", []string{"politeness.on_early"}},
		{"max_wait", "politeness:\n  max_wait: 0s\n", []string{"politeness.max_wait"}},
		{"backoff", "politeness:\n  backoff: yes\n", []string{"politeness.backoff"}},
		{"default_backoff", "politeness:\n  default_backoff: 0s\n", []string{"politeness.default_backoff"}},
		{"max_backoff under default", "politeness:\n  default_backoff: 1m\n  max_backoff: 30s\n", []string{"politeness.max_backoff"}},
		{"max_concurrent_per_host", "politeness:\n  max_concurrent_per_host: -1\n", []string{"politeness.max_concurrent_per_host"}},
		{"max_keys", "politeness:\n  max_keys: 0\n", []string{"politeness.max_keys"}},
		{"unknown politeness key", "politeness:\n  crawl_delays: enforce\n", []string{"politeness.crawl_delays"}},
		{"purpose of a token", "usage:\n  purposes:\n    GPTBot: [train-genai]\n", []string{"usage.purposes.GPTBot[0]", "train-genai"}},
		{"token of purposes", "usage:\n  purposes:\n    GPT/Bot: [search]\n", []string{"usage.purposes", "GPT/Bot"}},
		{"enforce", "usage:\n  enforce: sometimes\n", []string{"usage.enforce"}},
		{"purpose of a user", "identity:\n  users:\n    - name: a\n      password_bcrypt: \"" + hash + "\"\n      token: Bot\n      purposes: [search, ai-train]\n",
			[]string{"identity.users[0].purposes[1]", "ai-train"}},
		{"purpose of a range", "identity:\n  client_ranges:\n    - cidr: 10.0.0.0/8\n      token: Bot\n      purposes: [Search]\n",
			[]string{"identity.client_ranges[0].purposes[0]", "Search"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Load(%q): got %+v and no error, want an error naming %q", tt.in, cfg.Politeness, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q): got error %q, want it to contain %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestLoadPoliteness(t *testing.T) {
	in := `politeness:
  crawl_delay: enforce
  max_crawl_delay: 10s
  default_delay: 500ms
  on_early: reject
  max_wait: 5s
  backoff: enforce
  default_backoff: 2s
  max_backoff: 1m
  max_concurrent_per_host: 3
  max_keys: 50
usage:
  enforce: true
  purposes:
    GPTBot: [train-ai]
identity:
  users:
    - name: alice
      password_bcrypt: "` + hash + `"
      token: AliceBot
      purposes: [search]
  client_ranges:
    - cidr: 10.0.0.0/8
      token: RangeBot
      purposes: [ai-input]
`
	cfg, err := config.Load(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.PolitenessOn() {
		t.Error("PolitenessOn: got false, want true")
	}
	o := server.PolitenessOptions(cfg)
	if !o.CrawlDelay || o.MaxCrawlDelay != 10*time.Second || o.DefaultDelay != 500*time.Millisecond || !o.Reject ||
		o.MaxWait != 5*time.Second || !o.Backoff || o.MaxConcurrentPerHost != 3 || o.Scheduler == nil {
		t.Errorf("PolitenessOptions: got %+v", o)
	}
	pins := server.PinOptions(cfg)
	if len(pins.Users) != 1 || !slices.Equal(pins.Users[0].Purposes, []string{"search"}) ||
		len(pins.Ranges) != 1 || !slices.Equal(pins.Ranges[0].Purposes, []string{"ai-input"}) {
		t.Errorf("PinOptions: got users %+v ranges %+v, want alice with [search], 10.0.0.0/8 with [ai-input]", pins.Users, pins.Ranges)
	}
	if got := server.UsageDeclarations(cfg).Purposes(nil, "gptbot"); !slices.Equal(got, []string{"train-ai"}) {
		t.Errorf("Purposes(nil, gptbot): got %v, want [train-ai]", got)
	}
	def := config.Default()
	if def.PolitenessOn() || server.UsageDeclarations(def) != nil {
		t.Errorf("Default: PolitenessOn %v, declarations %v; want off and none", def.PolitenessOn(), server.UsageDeclarations(def))
	}
}
