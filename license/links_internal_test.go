package license

import (
	"fmt"
	"testing"
	"time"
)

// TestLinks: a remembered license lives for the TTL, is forgotten by an
// empty URL, and the memory stays within MaxLinks entries.
func TestLinks(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLinks(time.Hour, func() time.Time { return now })
	steps := []struct {
		name     string
		put      *string
		advance  time.Duration
		resource string
		want     string
	}{
		{"unknown", nil, 0, "http://a:80/x", ""},
		{"remembered", ptr("https://l/1.xml"), 0, "http://a:80/x", "https://l/1.xml"},
		{"exact resource only", nil, 0, "http://a:80/x?q", ""},
		{"other authority", nil, 0, "http://b:80/x", ""},
		{"before the TTL", nil, 59 * time.Minute, "http://a:80/x", "https://l/1.xml"},
		{"replaced", ptr("https://l/2.xml"), 0, "http://a:80/x", "https://l/2.xml"},
		{"after the TTL", nil, time.Hour, "http://a:80/x", ""},
		{"again", ptr("https://l/3.xml"), 0, "http://a:80/x", "https://l/3.xml"},
		{"forgotten", ptr(""), 0, "http://a:80/x", ""},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.put != nil {
			l.put("http://a:80/x", *s.put)
		}
		if got := l.get(s.resource); got != s.want {
			t.Errorf("%s: get(%q) = %q, want %q", s.name, s.resource, got, s.want)
		}
	}
	for i := 0; i < MaxLinks+10; i++ {
		l.put(fmt.Sprintf("http://a:80/%d", i), "https://l/x.xml")
	}
	if n := l.len(); n > MaxLinks {
		t.Errorf("%d entries, more than MaxLinks %d", n, MaxLinks)
	}
	if got := l.get(fmt.Sprintf("http://a:80/%d", MaxLinks+9)); got == "" {
		t.Error("the newest entry was evicted")
	}
}

func ptr(s string) *string { return &s }
