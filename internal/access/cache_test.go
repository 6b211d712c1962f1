package access_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// scriptedFetch is a FetchFunc that returns its script's results in order
// (repeating the last one) and records every call.
type scriptedFetch struct {
	mu     sync.Mutex
	script []policy.Access
	calls  []string // scheme://authority of each call
}

func (s *scriptedFetch) Fetch(_ context.Context, scheme, authority string) policy.Access {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.script[min(len(s.calls), len(s.script)-1)]
	s.calls = append(s.calls, scheme+"://"+authority)
	return a
}

func (s *scriptedFetch) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Scripted access results; label goes in FinalURL so that each step can
// tell which fetch's result it got.
func okAccess(label string, maxAge time.Duration) policy.Access {
	return policy.Access{Result: policy.Successful, Status: 200, FinalURL: label, MaxAge: maxAge, Robots: robots.Parse([]byte(stdRobots))}
}

func unavailableAccess(label string, maxAge time.Duration) policy.Access {
	return policy.Access{Result: policy.Unavailable, Status: 404, FinalURL: label, MaxAge: maxAge}
}

func unreachableAccess(label string) policy.Access {
	return policy.Access{Result: policy.Unreachable, Status: 503, FinalURL: label, MaxAge: -1}
}

// cacheStep advances the clock, calls Get and checks the answer.
type cacheStep struct {
	advance     time.Duration
	scheme      string // "" means "http"
	authority   string // "" means "a.example:80"
	wantResult  policy.AccessResult
	wantState   policy.CacheState
	wantLabel   string // FinalURL of the access returned; "" skips
	wantFetches int    // total fetches so far
}

func TestCache(t *testing.T) {
	const (
		hour = time.Hour
		day  = 24 * time.Hour
		S    = policy.Successful
		U    = policy.Unavailable
		X    = policy.Unreachable
		miss = policy.CacheMiss
		hit  = policy.CacheHit
		old  = policy.CacheStale
	)
	tests := []struct {
		name   string
		opts   access.CacheOptions
		script []policy.Access
		steps  []cacheStep
	}{
		{
			name:   "miss then hit",
			script: []policy.Access{okAccess("v1", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: day - time.Second, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
			},
		},
		{
			name:   "expiry after MaxTTL",
			script: []policy.Access{okAccess("v1", -1), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: day + time.Second, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
				{wantResult: S, wantState: hit, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "fresh until exactly MaxTTL",
			script: []policy.Access{okAccess("v1", -1), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: day - time.Nanosecond, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: time.Nanosecond, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "shorter MaxTTL option",
			opts:   access.CacheOptions{TTLRules: access.TTLRules{MaxTTL: hour}},
			script: []policy.Access{okAccess("v1", -1), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: hour - time.Second, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: time.Second, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "MaxTTL option above 24h is capped",
			opts:   access.CacheOptions{TTLRules: access.TTLRules{MaxTTL: 2 * day}},
			script: []policy.Access{okAccess("v1", -1), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: day, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "max-age shorter than MaxTTL",
			script: []policy.Access{okAccess("v1", 10*time.Minute), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: 10*time.Minute - time.Second, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: time.Second, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "max-age longer than MaxTTL",
			script: []policy.Access{okAccess("v1", 7*day), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: day, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "max-age 0 clamped at MinTTL",
			script: []policy.Access{okAccess("v1", 0), okAccess("v2", 0)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: 59 * time.Second, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: time.Second, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "max-age below a custom MinTTL",
			opts:   access.CacheOptions{TTLRules: access.TTLRules{MinTTL: 5 * time.Minute}},
			script: []policy.Access{okAccess("v1", 30*time.Second), okAccess("v2", 0)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: 5*time.Minute - time.Second, wantResult: S, wantState: hit, wantLabel: "v1", wantFetches: 1},
				{advance: time.Second, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "unavailable cached for MaxTTL",
			script: []policy.Access{unavailableAccess("n1", -1), unavailableAccess("n2", -1)},
			steps: []cacheStep{
				{wantResult: U, wantState: miss, wantLabel: "n1", wantFetches: 1},
				{advance: day - time.Second, wantResult: U, wantState: hit, wantLabel: "n1", wantFetches: 1},
				{advance: time.Second, wantResult: U, wantState: miss, wantLabel: "n2", wantFetches: 2},
			},
		},
		{
			name:   "unreachable retried after UnreachableRetry, not before",
			script: []policy.Access{unreachableAccess("u1"), unreachableAccess("u2")},
			steps: []cacheStep{
				{wantResult: X, wantState: miss, wantLabel: "u1", wantFetches: 1},
				{advance: 59 * time.Second, wantResult: X, wantState: hit, wantLabel: "u1", wantFetches: 1},
				{advance: time.Second, wantResult: X, wantState: miss, wantLabel: "u2", wantFetches: 2},
				{wantResult: X, wantState: hit, wantLabel: "u2", wantFetches: 2},
			},
		},
		{
			name:   "custom UnreachableRetry",
			opts:   access.CacheOptions{TTLRules: access.TTLRules{UnreachableRetry: 10 * time.Second}},
			script: []policy.Access{unreachableAccess("u1"), unreachableAccess("u2")},
			steps: []cacheStep{
				{wantResult: X, wantState: miss, wantLabel: "u1", wantFetches: 1},
				{advance: 9 * time.Second, wantResult: X, wantState: hit, wantLabel: "u1", wantFetches: 1},
				{advance: time.Second, wantResult: X, wantState: miss, wantLabel: "u2", wantFetches: 2},
			},
		},
		{
			name: "stale copy stands in while unreachable, until StaleFor",
			opts: access.CacheOptions{StaleFor: 2 * hour},
			script: []policy.Access{okAccess("v1", hour), unreachableAccess("u1"), unreachableAccess("u2"),
				unreachableAccess("u3"), unreachableAccess("u4")},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: hour, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 2},             // t=1h: u1
				{advance: 59 * time.Second, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 2}, // u1 still fresh
				{advance: time.Second, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 3},      // t=1h1m: u2
				{advance: 59 * time.Minute, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 4}, // t=2h=StaleFor: u3
				{advance: time.Minute, wantResult: X, wantState: miss, wantLabel: "u4", wantFetches: 5},     // t=2h1m: u4
				{wantResult: X, wantState: hit, wantLabel: "u4", wantFetches: 5},
			},
		},
		{
			// stale_for: 0s is documented as "disables": an unreachable
			// host is completely disallowed at once (RFC 9309 2.3.1.4).
			name:   "StaleFor Off never serves a stale copy",
			opts:   access.CacheOptions{StaleFor: access.Off},
			script: []policy.Access{okAccess("v1", hour), unreachableAccess("u1")},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: hour, wantResult: X, wantState: miss, wantLabel: "u1", wantFetches: 2},
			},
		},
		{
			name:   "MinTTL Off lets max-age 0 refetch at once",
			opts:   access.CacheOptions{TTLRules: access.TTLRules{MinTTL: access.Off}},
			script: []policy.Access{okAccess("v1", 0), okAccess("v2", 0)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 2},
			},
		},
		{
			name:   "default StaleFor is 24h",
			script: []policy.Access{okAccess("v1", -1), unreachableAccess("u1"), unreachableAccess("u2")},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: day, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 2},
				{advance: time.Minute, wantResult: X, wantState: miss, wantLabel: "u2", wantFetches: 3},
			},
		},
		{
			name:   "successful fetch ends a stale spell",
			script: []policy.Access{okAccess("v1", hour), unreachableAccess("u1"), okAccess("v2", -1)},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: hour, wantResult: S, wantState: old, wantLabel: "v1", wantFetches: 2},
				{advance: time.Minute, wantResult: S, wantState: miss, wantLabel: "v2", wantFetches: 3},
				{wantResult: S, wantState: hit, wantLabel: "v2", wantFetches: 3},
			},
		},
		{
			name:   "unavailable replaces a successful copy",
			script: []policy.Access{okAccess("v1", 0), unavailableAccess("n1", 0), unreachableAccess("u1")},
			steps: []cacheStep{
				{wantResult: S, wantState: miss, wantLabel: "v1", wantFetches: 1},
				{advance: time.Minute, wantResult: U, wantState: miss, wantLabel: "n1", wantFetches: 2},
				{wantResult: U, wantState: hit, wantLabel: "n1", wantFetches: 2},
				// v1 is only 2 minutes old, but unavailable replaced it.
				{advance: time.Minute, wantResult: X, wantState: miss, wantLabel: "u1", wantFetches: 3},
			},
		},
		{
			name:   "scheme is part of the key",
			script: []policy.Access{okAccess("v1", -1)},
			steps: []cacheStep{
				{scheme: "http", wantResult: S, wantState: miss, wantFetches: 1},
				{scheme: "https", wantResult: S, wantState: miss, wantFetches: 2},
				{scheme: "http", wantResult: S, wantState: hit, wantFetches: 2},
				{scheme: "http", authority: "a.example:8080", wantResult: S, wantState: miss, wantFetches: 3},
			},
		},
		{
			name:   "bounded: oldest entries evicted first",
			opts:   access.CacheOptions{MaxEntries: 3},
			script: []policy.Access{okAccess("v1", -1)},
			steps: []cacheStep{
				{authority: "a:80", wantResult: S, wantState: miss, wantFetches: 1},
				{authority: "b:80", wantResult: S, wantState: miss, wantFetches: 2},
				{authority: "c:80", wantResult: S, wantState: miss, wantFetches: 3},
				{authority: "d:80", wantResult: S, wantState: miss, wantFetches: 4}, // evicts a
				{authority: "e:80", wantResult: S, wantState: miss, wantFetches: 5}, // evicts b
				{authority: "e:80", wantResult: S, wantState: hit, wantFetches: 5},
				{authority: "c:80", wantResult: S, wantState: hit, wantFetches: 5},
				{authority: "a:80", wantResult: S, wantState: miss, wantFetches: 6}, // evicts c
				{authority: "b:80", wantResult: S, wantState: miss, wantFetches: 7}, // evicts d
				{authority: "e:80", wantResult: S, wantState: hit, wantFetches: 7},
				{authority: "c:80", wantResult: S, wantState: miss, wantFetches: 8}, // evicts e
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			f := &scriptedFetch{script: tt.script}
			opts := tt.opts
			opts.Now = clock.Now
			c := access.NewCache(f.Fetch, opts)
			var elapsed time.Duration
			for i, s := range tt.steps {
				clock.Advance(s.advance)
				elapsed += s.advance
				scheme, auth := s.scheme, s.authority
				if scheme == "" {
					scheme = "http"
				}
				if auth == "" {
					auth = "a.example:80"
				}
				a, state := c.Get(context.Background(), scheme, auth)
				calls := f.Calls()
				in := fmt.Sprintf("step %d: Get(%s://%s) at t0+%v", i, scheme, auth, elapsed)
				if a.Result != s.wantResult || state != s.wantState || s.wantLabel != "" && a.FinalURL != s.wantLabel || len(calls) != s.wantFetches {
					t.Fatalf("%s: got Result %q state %q from %q after %d fetches, want Result %q state %q from %q after %d fetches",
						in, a.Result, state, a.FinalURL, len(calls), s.wantResult, s.wantState, s.wantLabel, s.wantFetches)
				}
				if state == policy.CacheMiss && calls[len(calls)-1] != scheme+"://"+auth {
					t.Errorf("%s: got fetch of %q, want %q", in, calls[len(calls)-1], scheme+"://"+auth)
				}
				if (a.Robots != nil) != (a.Result == policy.Successful) {
					t.Errorf("%s: got Robots set %v with Result %q, want set only for %q", in, a.Robots != nil, a.Result, policy.Successful)
				}
				if max := tt.opts.MaxEntries; max > 0 && c.Len() > max {
					t.Errorf("%s: got Len() %d, want at most MaxEntries %d", in, c.Len(), max)
				}
			}
		})
	}
}

// TestCacheCoalescesConcurrentMisses checks that concurrent cold Gets for
// one authority share a single fetch.
func TestCacheCoalescesConcurrentMisses(t *testing.T) {
	const n = 200
	var started sync.WaitGroup
	started.Add(n)
	allStarted := make(chan struct{})
	go func() { started.Wait(); close(allStarted) }()

	var fetches atomic.Int64
	c := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		fetches.Add(1)
		<-allStarted // hold the fetch until every caller is running
		return okAccess("v1", -1)
	}, access.CacheOptions{Now: testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Now})

	type result struct {
		a     policy.Access
		state policy.CacheState
	}
	results := make([]result, n)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			a, state := c.Get(context.Background(), "http", "a.example:80")
			results[i] = result{a, state}
		}()
	}
	done.Wait()

	if got := fetches.Load(); got != 1 {
		t.Errorf("%d concurrent cold Gets: got %d fetches, want 1", n, got)
	}
	misses := 0
	for i, r := range results {
		if r.a.Result != policy.Successful || r.a.FinalURL != "v1" || r.state != policy.CacheMiss && r.state != policy.CacheHit {
			t.Errorf("Get #%d: got Result %q from %q state %q, want %q from \"v1\", state miss or hit", i, r.a.Result, r.a.FinalURL, r.state, policy.Successful)
		}
		if r.state == policy.CacheMiss {
			misses++
		}
	}
	if misses == 0 {
		t.Errorf("got 0 of %d Gets in state %q, want at least the one that fetched", n, policy.CacheMiss)
	}
	t.Logf("%d of %d Gets shared the fetch, %d found it cached", misses, n, n-misses)
}

// TestCacheDetachesFetchFromCaller checks that a caller whose context is
// cancelled does not fail the fetch that it started and others share.
func TestCacheDetachesFetchFromCaller(t *testing.T) {
	tests := []struct {
		name string
		// cancelBefore cancels the caller's context before Get; otherwise
		// it is cancelled while the fetch runs.
		cancelBefore bool
	}{
		{"cancelled before Get", true},
		{"cancelled during the fetch", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			var fetches atomic.Int64
			c := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
				fetches.Add(1)
				entered <- struct{}{}
				<-release
				if err := ctx.Err(); err != nil {
					a := unreachableAccess("cancelled")
					a.Err = fmt.Errorf("fetch saw %w", err)
					return a
				}
				return okAccess("v1", -1)
			}, access.CacheOptions{Now: testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Now})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelBefore {
				cancel()
			}
			type result struct {
				a     policy.Access
				state policy.CacheState
			}
			first, second := make(chan result, 1), make(chan result, 1)
			go func() {
				a, s := c.Get(ctx, "http", "a.example:80")
				first <- result{a, s}
			}()
			<-entered
			cancel()
			go func() { // a second caller that may join the flight
				a, s := c.Get(context.Background(), "http", "a.example:80")
				second <- result{a, s}
			}()
			close(release)
			for name, ch := range map[string]chan result{"cancelled caller": first, "other caller": second} {
				r := <-ch
				if r.a.Result != policy.Successful || errors.Is(r.a.Err, context.Canceled) {
					t.Errorf("%s: got Result %q state %q Err %v, want %q (the fetch must not see the caller's cancellation)", name, r.a.Result, r.state, r.a.Err, policy.Successful)
				}
			}
			if got := fetches.Load(); got != 1 {
				t.Errorf("got %d fetches, want 1", got)
			}
		})
	}
}
