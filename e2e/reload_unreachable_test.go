package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fixableOrigin answers robots.txt with 503 (unreachable) until fixed,
// then with an allow-all file; every other path with 200.
type fixableOrigin struct {
	srv     *httptest.Server
	fixed   atomic.Bool
	fetches atomic.Int64 // robots.txt requests
}

func newFixableOrigin(t *testing.T) *fixableOrigin {
	o := &fixableOrigin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.fetches.Add(1)
			if !o.fixed.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// TestReloadClearsUnreachable: a robots.txt found unreachable refuses its
// authority for cache.unreachable_retry (1 minute); after the origin is
// fixed, a reload (SIGHUP, configuration unchanged) ends that refusal at
// once, on one proxy and in a fleet, where a reloaded replica does not
// take the shared unreachable record either: it fetches and shares the
// new result, which the others then use once they reload.
func TestReloadClearsUnreachable(t *testing.T) {
	t.Run("one proxy", func(t *testing.T) {
		o := newFixableOrigin(t)
		rp := startReloadable(t, "")
		page := o.srv.URL + "/page"
		if got := rp.get(t, page); got != "403 unreachable" {
			t.Fatalf("first request: %q, want 403 unreachable", got)
		}
		o.fixed.Store(true)
		if got := rp.get(t, page); got != "403 unreachable" || o.fetches.Load() != 1 {
			t.Fatalf("after the fix, before the reload: %q after %d fetches, want the cached 403 unreachable", got, o.fetches.Load())
		}
		outcome, _ := rp.reload(t, "")
		if outcome["message"] != "configuration reloaded" || outcome["unreachable_cleared"] != 1.0 {
			t.Errorf("reload: %v, want reloaded with unreachable_cleared 1", outcome)
		}
		if got := rp.get(t, page); got != "200 " || o.fetches.Load() != 2 {
			t.Errorf("after the reload: %q after %d fetches, want 200 after a new fetch", got, o.fetches.Load())
		}
	})
	t.Run("fleet", func(t *testing.T) {
		rs := startRedisServer(t)
		o := newFixableOrigin(t)
		config := "shared:\n  redis_url: \"" + rs.URL() + "\"\n  timeout: 1s\n"
		a, b := startReloadable(t, config), startReloadable(t, config)
		page := o.srv.URL + "/page"
		for i, rp := range []*reloadProcess{a, b} {
			if got := rp.get(t, page); got != "403 unreachable" {
				t.Fatalf("replica %d: %q, want 403 unreachable", i, got)
			}
		}
		if n := o.fetches.Load(); n != 1 {
			t.Fatalf("robots.txt fetched %d times, want once for the fleet", n)
		}
		o.fixed.Store(true)
		b.reload(t, "")
		if got := b.get(t, page); got != "200 " || o.fetches.Load() != 2 {
			t.Errorf("reloaded replica: %q after %d fetches, want 200 after a fetch of its own", got, o.fetches.Load())
		}
		a.reload(t, "")
		if got := a.get(t, page); got != "200 " || o.fetches.Load() != 2 {
			t.Errorf("the other replica, reloaded: %q after %d fetches, want 200 from the shared result", got, o.fetches.Load())
		}
	})
}
