package robots

import "testing"

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pat, path string
		want      bool
	}{
		{"/", "/anything", true},
		{"/docs/", "/docs/a.html", true},
		{"/docs/", "/doc", false},
		{"/*.pdf$", "/a/b.pdf", true},
		{"/*.pdf$", "/a/b.pdf?x", false},
		{"/a%7e", "/a~", true},
		{"/a~", "/a%7E", true},
		{"/fish$", "/fish", true},
		{"/fish$", "/fish/", false},
		{"", "/", false},
	}
	for _, tt := range tests {
		if got := ParsePattern(tt.pat).Match(tt.path); got != tt.want {
			t.Errorf("ParsePattern(%q).Match(%q) = %v, want %v", tt.pat, tt.path, got, tt.want)
		}
	}
	if n := ParsePattern("/a~").Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
}
