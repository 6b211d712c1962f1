package site

import (
	"fmt"
	"strings"
	"testing"
)

// The memo of sites stays within its bounds, by entries and by octets,
// and answers the same after it is emptied.
func TestMemoBounded(t *testing.T) {
	var s Memo
	long := strings.Repeat("a", 2000)
	for i := range 3 * maxSites {
		u := fmt.Sprintf("https://h%d.example/x", i)
		if i%2 == 0 {
			u = fmt.Sprintf("https://%s%d.example/x", long[:60], i)
		}
		if got := s.Of([]byte(u)); !strings.HasPrefix(got.Origin, "https://") {
			t.Fatalf("%s: %+v", u, got)
		}
		if len(s.m) > maxSites || s.bytes > maxSiteBytes {
			t.Fatalf("after %d urls: %d entries, %d octets", i+1, len(s.m), s.bytes)
		}
	}
	if got := s.Of([]byte("HTTPS://u@H1.Example:443/y")); got != (Site{Origin: "https://h1.example", Authority: "h1.example:443", Host: "h1.example"}) {
		t.Errorf("got %+v", got)
	}
}

// A site is typed as an origin, an authority or a host name; each keeps
// the lines of the sites it names, whatever the url's spelling.
func TestFilterForms(t *testing.T) {
	urls := []string{"http://127.0.0.1:8001/a", "http://127.0.0.1:8003/a", "http://Example.COM:80/x",
		"https://user@example.com/x", "https://example.com:443/y", "example.com:443", "http://[::1]:8080/"}
	for _, c := range []struct {
		filter string
		want   int
	}{
		{"", 7}, {"127.0.0.1:8001", 1}, {"127.0.0.1", 2}, {"http://127.0.0.1:8003", 1}, {"https://127.0.0.1:8003", 0},
		{"EXAMPLE.com", 4}, {"example.com:443", 3}, {"https://example.com:443/", 3}, {"http://example.com", 1}, {"::1", 1}, {"[::1]", 1},
	} {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Errorf("%q: %v", c.filter, err)
			continue
		}
		n := 0
		for _, u := range urls {
			if f.Keep(Of([]byte(u))) {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%q keeps %d urls, want %d", c.filter, n, c.want)
		}
	}
	for _, bad := range []string{"ftp://example.com", "exa mple.com", "example.com:99999"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
