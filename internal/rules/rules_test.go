package rules_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want rules.Mode
		ok   bool
	}{
		{"", "", true},
		{"enforce", rules.ModeEnforce, true},
		{"report", rules.ModeReport, true},
		{"Enforce", "", false},
		{"audit", "", false},
	} {
		got, err := rules.ParseMode(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestTokenKey: product tokens compare case-insensitively (RFC 9309
// 2.2.1); the key lower-cases ASCII letters only.
func TestTokenKey(t *testing.T) {
	for in, want := range map[string]string{"ExampleBot": "examplebot", "examplebot": "examplebot", "My_Bot-X": "my_bot-x", "": "", "BÖT": "bÖt"} {
		if got := rules.TokenKey(in); got != want {
			t.Errorf("TokenKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPurposes(t *testing.T) {
	if got := strings.Join(rules.Purposes(), ","); got != "train-ai,search,ai-input" {
		t.Errorf("Purposes() = %s, want train-ai,search,ai-input", got)
	}
	for s, want := range map[string]bool{"train-ai": true, "search": true, "ai-input": true, "ai-train": false, "": false, "Search": false} {
		if got := rules.IsPurpose(s); got != want {
			t.Errorf("IsPurpose(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCheckSignatureBounds(t *testing.T) {
	for _, tt := range []struct {
		label   string
		expires time.Duration
		body    int64
		want    string // a part of the error, "" for none
	}{
		{"", 0, 0, ""},
		{"robotsproxy", rules.DefaultSignatureExpires, rules.DefaultSignatureMaxBodyBytes, ""},
		{"sig*1.a_b-c", rules.MaxSignatureExpires, 1, ""},
		{"Sig", 0, 0, "not a structured field key"},
		{"1sig", 0, 0, "not a structured field key"},
		{"sig", rules.MaxSignatureExpires + time.Second, 0, "want at most 24h"},
		{"sig", -time.Second, 0, "want at most"},
		{"sig", 0, -1, "max body bytes"},
	} {
		err := rules.CheckSignatureBounds(tt.label, tt.expires, tt.body)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckSignatureBounds(%q, %v, %d) = %v, want %q", tt.label, tt.expires, tt.body, err, tt.want)
		}
	}
}

func TestCheckAgentURL(t *testing.T) {
	for s, ok := range map[string]bool{
		"https://crawler.example.com":                       true,
		"https://crawler.example.com/.well-known/keys.json": true,
		"http://crawler.example.com":                        false,
		"https://":                                          false,
		"https://user@crawler.example.com":                  false,
		"https://crawler.example.com/#frag":                 false,
		"https://crawler.example.com/a b":                   false,
		"https://crawler.example.com/\u00e9":                false,
	} {
		if err := rules.CheckAgentURL(s); (err == nil) != ok {
			t.Errorf("CheckAgentURL(%q) = %v, want ok %v", s, err, ok)
		}
	}
}
