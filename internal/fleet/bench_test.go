package fleet

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// typicalRobots is a robots.txt of about 1 KB, the median size of the
// shared corpus (1,020 octets): a few groups, rules and a sitemap.
func typicalRobots(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# robots.txt of site %d\n", n)
	b.WriteString("User-agent: *\nDisallow: /admin/\nDisallow: /cart\nDisallow: /checkout/\nDisallow: /search?\n" +
		"Disallow: /*?sort=\nDisallow: /account/\nAllow: /account/login\nDisallow: /tmp/\n\n" +
		"User-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n\n" +
		"User-agent: Googlebot\nDisallow: /internal/\nAllow: /internal/press/\nCrawl-delay: 2\n\n" +
		"User-agent: bingbot\nDisallow: /internal/\nDisallow: /*.pdf$\n\n")
	for i := range 12 {
		fmt.Fprintf(&b, "Disallow: /section-%d/private/\n", i)
	}
	b.WriteString("\nSitemap: https://www.example.com/sitemap.xml\nSitemap: https://www.example.com/news-sitemap.xml\n")
	return b.String()
}

// typicalAccess is the Access a fetch of body from authority would give.
func typicalAccess(authority, body string) policy.Access {
	u := policy.RobotsURL("https", authority)
	return policy.Access{Result: policy.Successful, URL: u, FinalURL: u, Status: 200, MaxAge: -1,
		Duration: 80 * time.Millisecond, FetchedAt: time.Now(), Raw: []byte(body), SHA256: sha256.Sum256([]byte(body)),
		Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Last-Modified": {"Tue, 04 Nov 2025 10:00:00 GMT"}}}
}

// usedMemory returns INFO memory's used_memory, in octets.
func usedMemory(t testing.TB, s *Store) int64 {
	info, err := s.rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "used_memory:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO memory: no used_memory")
	return 0
}

// TestRedisMemoryPer10000Authorities stores the results of 10,000
// authorities (typical 1 KB robots.txt files, each different, then all
// the same) and measures the store's memory (INFO used_memory). The
// numbers are the README's sizing figures; the bounds catch a value that
// is not bounded as designed.
func TestRedisMemoryPer10000Authorities(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), func(o *Options) { o.MaxTTL = 24 * time.Hour })
	ctx := context.Background()
	const n = 10000
	for _, tc := range []struct {
		name     string
		distinct bool
		maxBytes int64 // per authority
	}{
		{"distinct bodies", true, 3 << 10},
		{"one body for all", false, 1 << 10},
	} {
		flush(t, r.Store)
		before := usedMemory(t, r.Store)
		for i := range n {
			authority := fmt.Sprintf("www.site-%d.example:443", i)
			body := typicalRobots(0)
			if tc.distinct {
				body = typicalRobots(i)
			}
			r.share(ctx, r.recordKey("https://"+authority), policy.RobotsURL("https", authority), typicalAccess(authority, body), lock{})
		}
		if r.counter("errors/write") != 0 {
			t.Fatalf("%s: %v write errors", tc.name, r.counter("errors/write"))
		}
		per := (usedMemory(t, r.Store) - before) / n
		t.Logf("%s: %d octets of Redis memory per authority (%d-octet robots.txt), %.1f MB per 10,000 authorities",
			tc.name, per, len(typicalRobots(n)), float64(per*n)/1e6)
		if per <= 0 || per > tc.maxBytes {
			t.Errorf("%s: %d octets per authority, want between 1 and %d", tc.name, per, tc.maxBytes)
		}
	}
}

// BenchmarkColdFetch measures what a local cache miss costs a replica:
// fetching from a loopback origin alone (no store), reading a shared
// result (GET and PTTL, GET of the body, SHA-256 check, compile), and a
// shared miss (lock, origin fetch, storing the result, unlock).
func BenchmarkColdFetch(b *testing.B) {
	rs := startRedis(b)
	body := typicalRobots(1)
	o := newRobotsOrigin(b, body)
	fetch := fetcher()
	// origin fetches o's robots.txt as the one of scheme://authority (a
	// shared record must name its key's URL).
	origin := func(ctx context.Context, scheme, authority string) policy.Access {
		a := fetch(ctx, "http", o.authority())
		a.URL = policy.RobotsURL(scheme, authority)
		return a
	}
	s, err := New(Options{URL: rs.URL(), KeyPrefix: "bench:", TTLRules: access.TTLRules{MaxTTL: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	keyed, err := New(Options{URL: rs.URL(), KeyPrefix: "bench-keyed:", TTLRules: access.TTLRules{MaxTTL: time.Hour}, RecordKey: testRecordKey})
	if err != nil {
		b.Fatal(err)
	}
	defer keyed.Close()
	ctx := context.Background()
	b.Run("origin only", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			origin(ctx, "http", "")
		}
	})
	b.Run("shared hit", func(b *testing.B) {
		s.Fetch(ctx, "http", "hit.example:80", origin)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if a := s.Fetch(ctx, "http", "hit.example:80", origin); a.Result != policy.Successful {
				b.Fatal(a.Result)
			}
		}
	})
	b.Run("shared hit, record key", func(b *testing.B) {
		keyed.Fetch(ctx, "http", "hit.example:80", origin)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if a := keyed.Fetch(ctx, "http", "hit.example:80", origin); a.Result != policy.Successful {
				b.Fatal(a.Result)
			}
		}
	})
	b.Run("shared miss", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		i := 0
		for b.Loop() {
			i++
			s.Fetch(ctx, "http", fmt.Sprintf("miss-%d.example:80", i), origin)
		}
	})
	if !s.Up() {
		b.Fatal("the store went down during the benchmark")
	}
}
