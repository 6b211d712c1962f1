package rules_test

import (
	"slices"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

func TestDefaultConnectPorts(t *testing.T) {
	got := rules.DefaultConnectPorts()
	if !slices.Equal(got, []int{443}) {
		t.Fatalf("DefaultConnectPorts(): got %v, want [443]", got)
	}
	got[0] = 1 // callers may change their copy
	if again := rules.DefaultConnectPorts(); !slices.Equal(again, []int{443}) {
		t.Errorf("DefaultConnectPorts() after changing a result: got %v, want [443]", again)
	}
}

func TestCheckHostEntry(t *testing.T) {
	cases := []struct {
		entry string
		ok    bool
	}{
		{"example.com", true},
		{".example.com", true},
		{"EXAMPLE.com", true},
		{"bücher.example", true},
		{"192.0.2.1", true},
		{"2001:db8::1", true},
		{"[2001:db8::1]", true},
		{"2001:db8:1:2:3:4:5:6", true},
		{"", false},
		{".", false},
		{"..example.com", false},
		{"*.example.com", false},
		{"example.com:8080", false},
		{"http://example.com", false},
		{"example.com/path", false},
		{"[a/b c", false},
		{"a::b/c d", false},
		{".2001:db8::1", false},
		{"[2001:db8::1", false},
		{"exa mple.com", false},
	}
	for _, c := range cases {
		if err := rules.CheckHostEntry(c.entry); (err == nil) != c.ok {
			t.Errorf("CheckHostEntry(%q) = %v, want ok=%v", c.entry, err, c.ok)
		}
	}
}
