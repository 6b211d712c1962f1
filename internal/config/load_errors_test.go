package config

import (
	"strings"
	"testing"
)

// TestLoadErrorsSayWhatToWrite: a decoding or validation error names the
// key path and says what is accepted, with an example or the closest key.
func TestLoadErrorsSayWhatToWrite(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"top-level typo", "allow_privat: true\n", []string{"allow_privat (line 1)", `unknown key "allow_privat"`, "did you mean allow_private?"}},
		{"nested typo", "robots:\n  timeoutt: 5s\n", []string{"robots.timeoutt (line 2)", "did you mean robots.timeout?"}},
		{"typo in a list item", "identity:\n  users:\n    - nam: x\n", []string{"identity.users[0].nam (line 3)", "did you mean identity.users[0].name?"}},
		{"no close key", "cache:\n  zzzzzzzz: 1\n", []string{"cache.zzzzzzzz (line 2)", "the keys of cache are", "max_ttl", "min_ttl"}},
		{"duration in days", "cache:\n  max_ttl: 1 day\n", []string{"cache.max_ttl (line 2)", `"1 day" is not a duration`, "30s", "a day is 24h"}},
		{"duration without unit", "robots:\n  timeout: 5\n", []string{"robots.timeout (line 2)", "not a duration", "5m"}},
		{"size with a unit", "robots:\n  max_bytes: 10MB\n", []string{"robots.max_bytes (line 2)", `"10MB" is not a size`, "1048576"}},
		{"MiB with a unit", "audit:\n  archive_max_mb: 1GB\n", []string{"audit.archive_max_mb (line 2)", "whole number of MiB", "100"}},
		{"not a number", "cache:\n  max_entries: lots\n", []string{"cache.max_entries (line 2)", "not a whole number"}},
		{"not a boolean", "allow_private: maybe\n", []string{"allow_private (line 1)", "true or false"}},
		{"mode", "mode: enforc\n", []string{"mode: must be one of enforce, report", `got "enforc"`, `for example "mode: enforce"`}},
		{"nested choice", "robots:\n  too_many_requests: retry\n", []string{"robots.too_many_requests", `for example "too_many_requests: unreachable"`}},
		{"section of a rules type", "signing:\n  identities:\n    - default: true\n      card: 5\n", []string{"signing.identities[0].card (line 4)", `"5" is not a section`}},
		{"two problems", "robots:\n  timeoutt: 5s\n  max_bytes: 1KB\n", []string{"robots.timeoutt (line 2)", "robots.max_bytes (line 3)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.yaml))
			if err == nil {
				t.Fatalf("Load(%q): got no error", tt.yaml)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q): got %q, want it to contain %q", tt.yaml, err, w)
				}
			}
			if strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "!!str") {
				t.Errorf("Load(%q): got %q, want no Go type names or YAML tags", tt.yaml, err)
			}
		})
	}
}
