package csvcell

import "testing"

func TestSafe(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"GPTBot", "GPTBot"},
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1", "'+1"},
		{"-2", "'-2"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"a=b", "a=b"},
		{"/path?q=1", "/path?q=1"},
	} {
		if got := Safe(tt.in); got != tt.want {
			t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
