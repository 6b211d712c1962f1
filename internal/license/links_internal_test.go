package license

import (
	"fmt"
	"runtime"
	"strings"
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

// TestLinksAccountHeap: the octets the Link memo accounts are at least
// 0.8 times the live heap its entries keep, and at most twice it, for
// short and long resources and license URLs.
func TestLinksAccountHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the memo")
	}
	for _, tt := range []struct {
		name          string
		path, license int // lengths
	}{
		{"short", 8, 30},
		{"long paths", 2000, 30},
		{"long license URLs", 8, 4000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := min(MaxLinks, int(MaxLinkBytes/int64(tt.path+tt.license+400)))
			path, lic := strings.Repeat("p", tt.path), strings.Repeat("l", tt.license)
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			l := newLinks(time.Hour, nil)
			for i := range n {
				l.put(fmt.Sprintf("https://host-%06d.example:443/%s", i, path), fmt.Sprintf("https://licenses.example/%06d/%s", i, lic))
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			if l.len() != n {
				t.Fatalf("got %d entries, want %d", l.len(), n)
			}
			heap, accounted := int64(m1.HeapAlloc)-int64(m0.HeapAlloc), l.lru.Size()
			t.Logf("%d entries: heap %d octets, accounted %d", n, heap, accounted)
			if float64(accounted) < 0.8*float64(heap) || accounted > 2*heap {
				t.Errorf("got %d octets accounted, want between 0.8 and 2 times the %d the heap keeps", accounted, heap)
			}
			runtime.KeepAlive(l)
		})
	}
}
