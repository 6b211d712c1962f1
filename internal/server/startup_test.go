package server

import "testing"

func TestRedactStore(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "off"},
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"},
		{"redis://user:pass@valkey:6379/2?dial_timeout=1s", "redis://valkey:6379"},
		{"rediss://:secret@redis.example:6380", "rediss://redis.example:6380"},
		{"unix:///run/redis.sock", "unix://"},
		{"redis+cluster://a:1?addr=b:2", "redis+cluster://a:1"},
		{"not a url", "(unparsable)"},
	} {
		if got := redactStore(tt.in); got != tt.want {
			t.Errorf("redactStore(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
