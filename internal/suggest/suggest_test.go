package suggest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"googlbot", "googlebot", 1}, {"googlebot", "", 9}, {"allow_privat", "allow_private", 1},
		{"kitten", "sitting", 3}, {"timeoutt", "timeout", 1}, {"gptbott", "gptbot", 1}, {"abc", "cba", 2},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want || Distance(tt.b, tt.a) != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
