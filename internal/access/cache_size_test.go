package access

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// realisticRobots returns a robots.txt of about n octets: groups for a few
// crawlers and many path rules, as large sites publish.
func realisticRobots(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%200 == 0 {
			fmt.Fprintf(&b, "\nUser-agent: Bot%c%c\nCrawl-delay: 5\n", 'a'+i/200%26, 'a'+i/5200%26)
		}
		fmt.Fprintf(&b, "Disallow: /section-%d/item-%d/*?session=*&sort=%d\n", i%97, i, i%13)
		if i%7 == 0 {
			fmt.Fprintf(&b, "Allow: /section-%d/item-%d/public.html$\n", i%97, i)
		}
	}
	return b.String()[:n]
}

// latin1Robots returns a robots.txt of about n octets whose rules are
// Latin-1 octets: the worst compiled size per octet measured.
func latin1Robots(n int) string {
	line := "Disallow: /" + strings.Repeat("\xe9", 40) + "\n"
	return "User-agent: *\n" + strings.Repeat(line, n/len(line))
}

// hostileRobots returns line(0) line(1) ... while they fit in n octets.
func hostileRobots(n int, line func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l) > n {
			return b.String()
		}
		b.WriteString(l)
	}
}

// heapPerEntry fills a cache with n entries from fetch and returns the
// live heap they add and the octets the cache accounts, per entry.
func heapPerEntry(t *testing.T, n int, fetch FetchFunc) (heap, accounted int64) {
	t.Helper()
	c := NewCache(fetch, CacheOptions{MaxEntries: n, MaxBytes: 1 << 40})
	auths := make([]string, n)
	for i := range auths {
		auths[i] = fmt.Sprintf("host-%06d.example.com:80", i)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for _, a := range auths {
		c.Get(context.Background(), "http", a)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if c.Len() != n {
		t.Fatalf("got Len %d, want %d", c.Len(), n)
	}
	heap = (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / int64(n)
	accounted = c.Bytes() / int64(n)
	runtime.KeepAlive(c)
	return heap, accounted
}

// TestCacheAccountsRetainedBytes: the octets the cache accounts per entry
// (entrySize) are within 15% of the heap the entry really keeps, for the
// smallest entries (a fetched small file, header fields and all), for
// 500 KiB files, and for the worst case (Latin-1 rules), so that
// cache.max_bytes bounds memory.
func TestCacheAccountsRetainedBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("fills caches")
	}
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("Last-Modified", "Sun, 22 Nov 2026 20:00:00 GMT")
		w.Header().Set("Etag", `"5f3a-61b2"`)
		_, _ = w.Write([]byte("User-agent: *\nDisallow: /private/\n\nUser-agent: ExampleBot\nDisallow: /nope/\n"))
	}))
	defer o.Close()
	f := NewFetcher(FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	defer f.client.CloseIdleConnections()
	originHost := strings.TrimPrefix(o.URL, "http://")
	compiled := func(body string) FetchFunc {
		return func(_ context.Context, scheme, authority string) policy.Access {
			url := policy.RobotsURL(scheme, authority)
			return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1,
				Robots: robots.Parse([]byte(body)), FetchedAt: time.Now()}
		}
	}
	for _, tt := range []struct {
		name  string
		n     int
		fetch FetchFunc
	}{
		{"small file, fetched", 4000, func(ctx context.Context, scheme, _ string) policy.Access {
			return f.Fetch(ctx, scheme, originHost) // URL and FinalURL as a fetch makes them
		}},
		{"unreachable", 4000, func(_ context.Context, scheme, authority string) policy.Access {
			return policy.Access{Result: policy.Unreachable, URL: policy.RobotsURL(scheme, authority), MaxAge: -1,
				Err: fmt.Errorf("get %s: dial tcp: connection refused", policy.RobotsURL(scheme, authority))}
		}},
		{"500 KiB", 24, compiled(realisticRobots(500 << 10))},
		{"Latin-1 rules", 12, compiled(latin1Robots(200 << 10))},
		{"hostile: many groups", 12, compiled(hostileRobots(500<<10, func(i int) string { return fmt.Sprintf("User-agent: b%x\nDisallow: /\n", i) }))},
		{"hostile: many agents per group", 12, compiled("" + hostileRobots(500<<10, func(i int) string { return fmt.Sprintf("User-agent: b%x\n", i) }) + "Disallow: /\n")},
		{"hostile: many rules", 12, compiled("User-agent: *\n" + hostileRobots(500<<10, func(i int) string { return fmt.Sprintf("Allow:/%x\n", i) }))},
		{"hostile: long patterns", 12, compiled("User-agent: *\n" + hostileRobots(500<<10, func(i int) string {
			return "Disallow: /" + strings.Repeat("*a", 4000) + fmt.Sprintf("%%%02X$\n", i%256)
		}))},
		{"hostile: content usage", 12, compiled("User-agent: *\n" + hostileRobots(500<<10, func(i int) string {
			return fmt.Sprintf("Content-Usage: /%x train-ai=n\n", i)
		}))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			heap, accounted := heapPerEntry(t, tt.n, tt.fetch)
			t.Logf("per entry: heap %d octets, accounted %d", heap, accounted)
			if float64(accounted) < 0.95*float64(heap) || float64(accounted) > 1.15*float64(heap) {
				t.Errorf("got %d octets accounted per entry, want within -5%%..+15%% of the %d the heap keeps", accounted, heap)
			}
		})
	}
}

// TestCacheEvictsByBytes: once the accounted octets pass MaxBytes, the
// oldest entries are evicted first, whatever MaxEntries allows; an entry
// refreshed with a larger file is re-accounted; one entry larger than
// MaxBytes is kept alone.
func TestCacheEvictsByBytes(t *testing.T) {
	bodies := map[string]string{} // authority -> robots.txt
	fetch := func(_ context.Context, scheme, authority string) policy.Access {
		url := policy.RobotsURL(scheme, authority)
		return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1,
			Robots: robots.Parse([]byte(bodies[authority]))}
	}
	size := func(body string) int64 {
		url := policy.RobotsURL("http", "a.example:80")
		e := &entry{latest: policy.Access{URL: url, FinalURL: url, Robots: robots.Parse([]byte(body))}}
		return entrySize(policy.CacheKey("http", "a.example:80"), e)
	}
	small, large := realisticRobots(20<<10), realisticRobots(100<<10)
	now := time.Unix(1e9, 0)
	c := NewCache(fetch, CacheOptions{MaxEntries: 100, MaxBytes: 3*size(small) + size(small)/2, TTLRules: TTLRules{MinTTL: Off},
		Now: func() time.Time { return now }})
	get := func(auth, body string) {
		bodies[auth] = body
		c.Get(context.Background(), "http", auth)
	}
	has := func(auth string) bool { return c.fresh(policy.CacheKey("http", auth)) != nil }
	for _, a := range []string{"a.example:80", "b.example:80", "c.example:80", "d.example:80"} {
		get(a, small)
	}
	if c.Len() != 3 || has("a.example:80") || !has("d.example:80") {
		t.Errorf("after 4 files for 3.5 of room: got Len %d, a cached %v, d cached %v; want 3, a evicted first, d kept",
			c.Len(), has("a.example:80"), has("d.example:80"))
	}
	if got, want := c.Bytes(), 3*size(small); got != want || got > c.opts.MaxBytes {
		t.Errorf("got Bytes %d, want %d (at most MaxBytes %d)", got, want, c.opts.MaxBytes)
	}
	now = now.Add(25 * time.Hour) // every entry is due for a refetch
	get("c.example:80", large)    // larger than all the room: kept alone
	if c.Len() != 1 || !has("c.example:80") || c.Bytes() != size(large) {
		t.Errorf("after an entry larger than MaxBytes: got Len %d, Bytes %d, want 1 entry of %d octets", c.Len(), c.Bytes(), size(large))
	}
	get("e.example:80", small)
	if c.Len() != 1 || !has("e.example:80") || c.Bytes() != size(small) {
		t.Errorf("after a small entry: got Len %d, Bytes %d, want only it, %d octets", c.Len(), c.Bytes(), size(small))
	}
}
