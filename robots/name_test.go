package robots_test

import (
	"slices"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

func TestIsAgentName(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"ExampleBot", true},
		{"Googlebot-Image", true},
		{"_-", true}, // an RFC 9309 product token, as today
		{"MJ12bot", true},
		{"360Spider", true},
		{"img2dataset", true},
		{"Mail.RU_Bot", true},
		{"omgili.com", true},
		{"larbin_2.6.2", true},
		{"", false},
		{"*", false},
		{"+http", false},
		{"5.0", false},
		{"12", false},
		{"_1bot", false},
		{"MJ12bot/1.4", false},
		{"MJ12 bot", false},
		{"bot\u00e9", false},
	}
	for _, tt := range tests {
		if got := robots.IsAgentName(tt.s); got != tt.want {
			t.Errorf("IsAgentName(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestNameRule: a group applies to a crawler that its user-agent line
// names whole, case-insensitively, as well as by its product token.
func TestNameRule(t *testing.T) {
	r := robots.Parse([]byte("User-agent: *\nAllow: /\n\n" +
		"User-agent: MJ12bot\nDisallow: /\n\n" +
		"User-agent: 360Spider/2.0\nUser-agent: omgili.com\nDisallow: /a\n\n" +
		"User-agent: +http\nUser-agent: 5.0\nDisallow: /b\n"))
	tests := []struct {
		token    string
		path     string
		allowed  bool
		agent    string
		fallback bool
	}{
		{"MJ12bot", "/x", false, "mj12bot", false},
		{"mj12BOT", "/x", false, "mj12bot", false},
		{"MJ", "/x", false, "mj", false}, // the product token matches as before
		{"MJ12", "/x", true, "*", true},
		{"MJ12bot2", "/x", true, "*", true},
		{"360Spider", "/a", false, "360spider", false},
		{"360spider", "/x", true, "360spider", false},
		{"omgili.com", "/a", false, "omgili.com", false},
		{"omgili", "/a", false, "omgili", false},
		{"+http", "/b", true, "*", true},
		{"5.0", "/b", true, "*", true},
	}
	for _, tt := range tests {
		v := r.Test(tt.path, tt.token)
		if v.Allowed != tt.allowed || v.Agent != tt.agent || v.Fallback != tt.fallback {
			t.Errorf("Test(%q, %q): got allowed %v agent %q fallback %v, want %v %q %v",
				tt.path, tt.token, v.Allowed, v.Agent, v.Fallback, tt.allowed, tt.agent, tt.fallback)
		}
	}
	wantAgents := [][]string{{"*"}, {"MJ12bot"}, {"360Spider", "omgili.com"}, {"", ""}}
	for i, g := range r.Groups() {
		if !slices.Equal(g.Agents, wantAgents[i]) {
			t.Errorf("group %d: Agents %q, want %q", i, g.Agents, wantAgents[i])
		}
	}
	if !r.HasGroup("MJ12bot") || !r.HasGroup("360SPIDER") || r.HasGroup("+http") {
		t.Errorf("HasGroup: MJ12bot %v 360SPIDER %v +http %v, want true true false",
			r.HasGroup("MJ12bot"), r.HasGroup("360SPIDER"), r.HasGroup("+http"))
	}
}
func TestIsProductToken(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"ExampleBot", true},
		{"a", true},
		{"My_Crawler-x", true},
		{"-", true},
		{"_", true},
		{"", false},
		{"*", false},
		{"Bot2", false},
		{"Bot/1.0", false},
		{"My Bot", false},
		{"Bot.", false},
		{"Bötchen", false},
		{"Bot\n", false},
	}
	for _, tt := range tests {
		if got := robots.IsProductToken(tt.s); got != tt.want {
			t.Errorf("IsProductToken(%q): got %v, want %v", tt.s, got, tt.want)
		}
	}
}
