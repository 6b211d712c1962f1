package access_test

import (
	"context"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestCacheForgetUnreachable: ForgetUnreachable ends the unreachable
// results before cache.unreachable_retry does, and only them: the next
// Get fetches again; a successful copy standing in (stale) keeps
// standing in when that fetch fails again; other results stay cached.
func TestCacheForgetUnreachable(t *testing.T) {
	ctx := context.Background()
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	down := &scriptedFetch{script: []policy.Access{unreachableAccess("x1"), okAccess("ok", -1)}}
	stale := &scriptedFetch{script: []policy.Access{okAccess("good", time.Minute), unreachableAccess("x1"), unreachableAccess("x2")}}
	fine := &scriptedFetch{script: []policy.Access{okAccess("v1", -1)}}
	fetch := func(ctx context.Context, scheme, authority string) policy.Access {
		switch authority {
		case "down.example:80":
			return down.Fetch(ctx, scheme, authority)
		case "stale.example:80":
			return stale.Fetch(ctx, scheme, authority)
		}
		return fine.Fetch(ctx, scheme, authority)
	}
	c := access.NewCache(fetch, access.CacheOptions{Now: clock.Now})
	get := func(host string) (policy.Access, policy.CacheState) { return c.Get(ctx, "http", host+":80") }

	get("stale.example")
	clock.Advance(time.Minute) // the good copy's max-age is over
	get("down.example")
	get("fine.example")
	if a, st := get("stale.example"); st != policy.CacheStale || a.FinalURL != "good" {
		t.Fatalf("stale.example: got %s %q, want the good copy standing in", st, a.FinalURL)
	}
	if a, st := get("down.example"); st != policy.CacheHit || a.Result != policy.Unreachable {
		t.Fatalf("down.example before: got %s %s, want the unreachable result cached", st, a.Result)
	}
	if n := c.ForgetUnreachable(); n != 2 {
		t.Errorf("ForgetUnreachable: %d ended, want 2", n)
	}
	if a, st := get("down.example"); st != policy.CacheMiss || a.FinalURL != "ok" || len(down.Calls()) != 2 {
		t.Errorf("down.example after: got %s %q after %d fetches, want a new fetch, successful", st, a.FinalURL, len(down.Calls()))
	}
	if a, st := get("stale.example"); st != policy.CacheStale || a.FinalURL != "good" || len(stale.Calls()) != 3 {
		t.Errorf("stale.example after: got %s %q after %d fetches, want a new fetch (unreachable again) and the good copy still standing in", st, a.FinalURL, len(stale.Calls()))
	}
	if _, st := get("fine.example"); st != policy.CacheHit || len(fine.Calls()) != 1 {
		t.Errorf("fine.example: got %s after %d fetches, want a hit: only unreachable results are ended", st, len(fine.Calls()))
	}
	if n := c.ForgetUnreachable(); n != 1 { // stale.example's second unreachable fetch
		t.Errorf("second ForgetUnreachable: %d ended, want 1", n)
	}
}
