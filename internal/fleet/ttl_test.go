package fleet

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestSharedTTLIsTheCacheTTL: a fleet member shares a response for as
// long as a single proxy's cache keeps it, under the same rules: both
// read the same options (zero values included) the same way.
func TestSharedTTLIsTheCacheTTL(t *testing.T) {
	responses := []struct {
		name   string
		status int
		header []string // key-value pairs
	}{
		{"max-age 300", 200, []string{"Cache-Control", "max-age=300"}},
		{"max-age 0", 200, []string{"Cache-Control", "max-age=0"}},
		{"max-age 10", 200, []string{"Cache-Control", "public, max-age=10"}},
		{"max-age over a day", 200, []string{"Cache-Control", "max-age=200000"}},
		{"no-cache", 200, []string{"Cache-Control", "no-cache"}},
		{"Expires only", 200, []string{"Expires", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}},
		{"no header", 200, nil},
		{"404 max-age 30", 404, []string{"Cache-Control", "max-age=30"}},
		{"503", 503, []string{"Cache-Control", "max-age=3600"}},
	}
	rules := []struct {
		name                     string
		minTTL, maxTTL, retryTTL time.Duration
	}{
		{"zero values", 0, 0, 0},
		{"no minimum", access.Off, 0, 0},
		{"minimum 5m", 5 * time.Minute, 0, 0},
		{"maximum 1h, retry 30s", 0, time.Hour, 30 * time.Second},
		{"minimum above maximum", 2 * time.Hour, time.Hour, 0},
	}
	for _, resp := range responses {
		o := newRobotsOrigin(t, "User-agent: *\nDisallow: /x\n")
		o.status = resp.status
		for i := 0; i+1 < len(resp.header); i += 2 {
			o.header.Set(resp.header[i], resp.header[i+1])
		}
		a := fetcher()(context.Background(), "http", o.authority())
		for _, r := range rules {
			var so Options
			so.MinTTL, so.MaxTTL, so.UnreachableRetry = r.minTTL, r.maxTTL, r.retryTTL
			so.setDefaults()
			shared := (&Store{o: so}).ttl(a)

			var co access.CacheOptions
			co.MinTTL, co.MaxTTL, co.UnreachableRetry = r.minTTL, r.maxTTL, r.retryTTL
			keeps := shared == 0 || !refetchesAfter(a, co, shared-time.Nanosecond)
			if !keeps || !refetchesAfter(a, co, shared) {
				t.Errorf("%s (%s, max-age %v), %s: the fleet shares it for %v, a single proxy caches it for another time",
					resp.name, a.Result, a.MaxAge, r.name, shared)
			}
		}
	}
}

// refetchesAfter reports whether a Cache with options o, which stored a,
// fetches again d later.
func refetchesAfter(a policy.Access, o access.CacheOptions, d time.Duration) bool {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return now }
	fetches := 0
	c := access.NewCache(func(context.Context, string, string) policy.Access { fetches++; return a }, o)
	c.Get(context.Background(), "http", "a.example:80")
	now = now.Add(d)
	c.Get(context.Background(), "http", "a.example:80")
	return fetches == 2
}
