package fleet

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// robotsOrigin serves a robots.txt body, counting fetches.
type robotsOrigin struct {
	srv     *httptest.Server
	fetches atomic.Int64
	mu      sync.Mutex
	body    string
	header  http.Header
	delay   time.Duration
	status  int
}

func newRobotsOrigin(t testing.TB, body string) *robotsOrigin {
	o := &robotsOrigin{body: body, status: http.StatusOK, header: http.Header{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.fetches.Add(1)
		o.mu.Lock()
		body, delay, status := o.body, o.delay, o.status
		for k, v := range o.header {
			w.Header()[k] = v
		}
		o.mu.Unlock()
		time.Sleep(delay)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// authority is the origin's host:port.
func (o *robotsOrigin) authority() string {
	u, _ := url.Parse(o.srv.URL)
	return u.Host
}

// fetcher returns the origin fetch of a replica: a real access.Fetcher.
func fetcher() access.FetchFunc {
	return access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true},
		UserAgent: "robotsproxy-test", Timeout: 5 * time.Second}).Fetch
}

// allowed decides path for token on a.
func allowed(a policy.Access, token, path string) bool {
	if a.Result != policy.Successful {
		return a.Result == policy.Unavailable
	}
	return a.Robots.Test(path, token).Allowed
}

func TestFetchOneOriginFetchForTheFleet(t *testing.T) {
	rs := startRedis(t)
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	o.delay = 200 * time.Millisecond
	o.header.Set("Cache-Control", "max-age=60")
	replicas := []*replica{newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)}
	got := make([]policy.Access, len(replicas))
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() { got[i] = r.Fetch(context.Background(), "http", o.authority(), fetcher()) })
	}
	wg.Wait()
	if n := o.fetches.Load(); n != 1 {
		t.Fatalf("origin fetches: got %d, want 1 for 3 replicas", n)
	}
	var hits, misses, waits float64
	for i, r := range replicas {
		hits, misses, waits = hits+r.counter("hits"), misses+r.counter("misses"), waits+r.counter("lock_waits")
		a := got[i]
		if a.Result != policy.Successful || a.SHA256 != got[0].SHA256 || !a.FetchedAt.Equal(got[0].FetchedAt) {
			t.Errorf("replica %d: got %s sha %x fetched %v, want successful, the same fetch as replica 0", i, a.Result, a.SHA256, a.FetchedAt)
		}
		if a.MaxAge <= 0 || a.MaxAge > time.Minute {
			t.Errorf("replica %d: MaxAge %v, want the remaining lifetime in (0, 60s]", i, a.MaxAge)
		}
		for path, want := range map[string]bool{"/": true, "/private": false, "/private/x": false, "/public": true} {
			if allowed(a, "Bot", path) != want {
				t.Errorf("replica %d: %s allowed %v, want %v", i, path, !want, want)
			}
		}
	}
	if hits != 2 || misses != 1 || waits != 2 {
		t.Errorf("hits, misses, lock waits: got %v, %v, %v; want 2, 1, 2", hits, misses, waits)
	}
}

func TestFetchSharesEveryResult(t *testing.T) {
	rs := startRedis(t)
	tests := []struct {
		name    string
		status  int
		cc      string
		body    string
		want    policy.AccessResult
		wantTTL time.Duration // the shared TTL (no MinTTL, MaxTTL 1h, UnreachableRetry 1m)
	}{
		{"successful with max-age", 200, "max-age=30", "User-agent: *\nDisallow: /\n", policy.Successful, 30 * time.Second},
		{"successful without max-age", 200, "", "User-agent: *\nAllow: /\n", policy.Successful, time.Hour},
		{"empty body", 200, "", "", policy.Successful, time.Hour},
		{"unavailable", 404, "max-age=10", "", policy.Unavailable, 10 * time.Second},
		{"unreachable", 503, "max-age=10", "", policy.Unreachable, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newRobotsOrigin(t, tc.body)
			o.status = tc.status
			if tc.cc != "" {
				o.header.Set("Cache-Control", tc.cc)
			}
			a, b := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
			first := a.Fetch(context.Background(), "http", o.authority(), fetcher())
			second := b.Fetch(context.Background(), "http", o.authority(), fetcher())
			if n := o.fetches.Load(); n != 1 {
				t.Fatalf("origin fetches: got %d, want 1", n)
			}
			if second.Result != tc.want || second.Status != tc.status || second.URL != first.URL ||
				second.SHA256 != first.SHA256 || string(second.Raw) != string(first.Raw) || (second.Err == nil) != (first.Err == nil) {
				t.Errorf("shared copy: got %s %d %s sha %x err %v; want %s %d %s sha %x err %v",
					second.Result, second.Status, second.URL, second.SHA256, second.Err,
					tc.want, tc.status, first.URL, first.SHA256, first.Err)
			}
			if second.MaxAge <= tc.wantTTL-2*time.Second || second.MaxAge > tc.wantTTL {
				t.Errorf("shared copy MaxAge: got %v, want just under %v", second.MaxAge, tc.wantTTL)
			}
			for _, p := range []string{"/", "/x"} {
				if allowed(first, "Bot", p) != allowed(second, "Bot", p) {
					t.Errorf("%s: fetched copy allows %v, shared copy %v", p, allowed(first, "Bot", p), allowed(second, "Bot", p))
				}
			}
		})
	}
}

// TestFetchUnreadableIsMiss damages the shared values of an authority
// whose robots.txt disallows /private: every damage must be a miss (a
// fetch from the origin), never the damaged value, never an allow.
func TestFetchUnreadableIsMiss(t *testing.T) {
	rs := startRedis(t)
	allowAll := "User-agent: *\nAllow: /\n"
	tests := []struct {
		name   string
		damage func(t *testing.T, r *replica, recKey, bodyKey string)
	}{
		{"record not JSON", func(t *testing.T, r *replica, recKey, _ string) {
			r.rdb.Set(context.Background(), recKey, "{not json", time.Minute)
		}},
		{"body replaced", func(t *testing.T, r *replica, _, bodyKey string) {
			r.rdb.Set(context.Background(), bodyKey, allowAll, time.Minute)
		}},
		{"body missing", func(t *testing.T, r *replica, _, bodyKey string) {
			r.rdb.Del(context.Background(), bodyKey)
		}},
		{"result rewritten", func(t *testing.T, r *replica, recKey, _ string) {
			r.rdb.Set(context.Background(), recKey, `{"access_result":"allowed","parse_limit":524288,"ttl_ms":60000}`, time.Minute)
		}},
		{"successful without a body", func(t *testing.T, r *replica, recKey, _ string) {
			r.rdb.Set(context.Background(), recKey, `{"access_result":"successful","parse_limit":524288,"ttl_ms":60000}`, time.Minute)
		}},
		{"another parse limit", func(t *testing.T, r *replica, recKey, _ string) {
			raw, _ := r.rdb.Get(context.Background(), recKey).Bytes()
			raw = []byte(strings.Replace(string(raw), `"parse_limit":524288`, `"parse_limit":600000`, 1))
			r.rdb.Set(context.Background(), recKey, raw, time.Minute)
		}},
		// Oversize values: the record stays valid JSON (trailing blanks),
		// the body starts with the right octets. Neither may be read whole.
		{"record of 4 MiB", func(t *testing.T, r *replica, recKey, _ string) {
			raw, _ := r.rdb.Get(context.Background(), recKey).Bytes()
			r.rdb.Set(context.Background(), recKey, append(raw, strings.Repeat(" ", oversize)...), time.Minute)
		}},
		{"body of 4 MiB", func(t *testing.T, r *replica, _, bodyKey string) {
			raw, _ := r.rdb.Get(context.Background(), bodyKey).Bytes()
			r.rdb.Set(context.Background(), bodyKey, append(raw, strings.Repeat("#", oversize)...), time.Minute)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flush(t, newReplica(t, rs.URL(), nil).Store)
			o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
			writer, reader := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
			first := writer.Fetch(context.Background(), "http", o.authority(), fetcher())
			recKey := writer.recordKey("http://" + o.authority())
			bodyKey := writer.key("body", hex.EncodeToString(first.SHA256[:]))
			tc.damage(t, writer, recKey, bodyKey)
			lockKey := reader.lockKey("http://" + o.authority())
			claim := func() (ok bool, err error) {
				_, ok, won, err := reader.claim(context.Background(), recKey, lockKey, first.URL, "test")
				if won {
					reader.rdb.Del(context.Background(), lockKey)
				}
				return ok, err
			}
			if ok, err := claim(); ok || err != nil {
				t.Errorf("claim of the damaged value: got hit %v, error %v; want a miss", ok, err)
			}
			if n := allocated(func() { _, _ = claim() }); n > oversize/4 {
				t.Errorf("claim allocated %d octets, want at most %d (values are read up to their bound only)", n, oversize/4)
			}
			got := reader.Fetch(context.Background(), "http", o.authority(), fetcher())
			if n := o.fetches.Load(); n != 2 {
				t.Errorf("origin fetches: got %d, want 2 (the damaged value is a miss)", n)
			}
			if allowed(got, "Bot", "/private") {
				t.Errorf("/private: allowed after the shared value was damaged, want disallowed")
			}
			if reader.counter("errors/read") < 1 && tc.name != "body missing" {
				t.Errorf("read errors: got %v, want at least 1", reader.counter("errors/read"))
			}
		})
	}
}

// oversize is the length of the oversize values of
// TestFetchUnreadableIsMiss: far over every bound of a record or a body.
const oversize = 4 << 20

// allocated returns the octets the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestFetchWaitsForTheLockHolder(t *testing.T) {
	rs := startRedis(t)
	tests := []struct {
		name        string
		publish     bool // the holder publishes after 300ms
		wantFetches int64
		minWait     time.Duration
	}{
		{"holder publishes", true, 0, 250 * time.Millisecond},
		{"holder never publishes", false, 1, 2*time.Second - pollMax}, // WaitFor, less a poll
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newRobotsOrigin(t, "User-agent: *\nDisallow: /p\n")
			holder, waiter := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
			ctx := context.Background()
			id := "http://" + o.authority()
			if ok, _ := holder.rdb.SetNX(ctx, holder.lockKey(id), "someone", time.Minute).Result(); !ok {
				t.Fatal("lock already taken")
			}
			if tc.publish {
				time.AfterFunc(300*time.Millisecond, func() {
					a := policy.Access{Result: policy.Unavailable, URL: id + "/robots.txt", FinalURL: id + "/robots.txt",
						Status: 404, MaxAge: -1, FetchedAt: time.Now()}
					holder.share(ctx, holder.recordKey(id), id+"/robots.txt", a, lock{})
				})
			}
			start := time.Now()
			got := waiter.Fetch(ctx, "http", o.authority(), fetcher())
			took := time.Since(start)
			if n := o.fetches.Load(); n != tc.wantFetches {
				t.Errorf("origin fetches: got %d, want %d", n, tc.wantFetches)
			}
			if took < tc.minWait || took > tc.minWait+time.Second {
				t.Errorf("Fetch took %v, want about %v", took, tc.minWait)
			}
			if tc.publish && got.Result != policy.Unavailable {
				t.Errorf("result: got %s, want the published unavailable", got.Result)
			}
			if waiter.counter("lock_waits") != 1 {
				t.Errorf("lock waits: got %v, want 1", waiter.counter("lock_waits"))
			}
		})
	}
}

func TestFreshWithinMaxTTL(t *testing.T) {
	s := &Store{o: Options{TTLRules: access.TTLRules{MinTTL: time.Minute, MaxTTL: 24 * time.Hour}}}
	tests := []struct {
		ttl, remaining time.Duration
		want           bool
	}{
		{24 * time.Hour, 24 * time.Hour, true},
		{24 * time.Hour, 2 * time.Minute, true},
		{24 * time.Hour, time.Minute, true},
		// the cache would keep it a minute: 24h00m30s in total
		{24 * time.Hour, 30 * time.Second, false},
		{time.Hour, time.Second, true},
		{time.Minute, time.Millisecond, true},
	}
	for _, tc := range tests {
		r := record{TTLMS: tc.ttl.Milliseconds()}
		if got := s.fresh(r, tc.remaining); got != tc.want {
			t.Errorf("fresh(ttl %v, remaining %v): got %v, want %v", tc.ttl, tc.remaining, got, tc.want)
		}
	}
}

func TestTTLFollowsTheCacheRules(t *testing.T) {
	s := &Store{o: Options{TTLRules: access.TTLRules{MinTTL: time.Minute, MaxTTL: 2 * time.Hour, UnreachableRetry: 30 * time.Second}}}
	tests := []struct {
		result policy.AccessResult
		maxAge time.Duration
		want   time.Duration
	}{
		{policy.Successful, -1, 2 * time.Hour},
		{policy.Successful, 0, time.Minute},
		{policy.Successful, 10 * time.Minute, 10 * time.Minute},
		{policy.Successful, 48 * time.Hour, 2 * time.Hour},
		{policy.Unavailable, 5 * time.Second, time.Minute},
		{policy.Unreachable, time.Hour, 30 * time.Second},
	}
	for _, tc := range tests {
		if got := s.ttl(policy.Access{Result: tc.result, MaxAge: tc.maxAge}); got != tc.want {
			t.Errorf("ttl(%s, max-age %v): got %v, want %v", tc.result, tc.maxAge, got, tc.want)
		}
	}
}

func TestFetchNilStoreCallsOrigin(t *testing.T) {
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /\n")
	var s *Store
	a := s.Fetch(context.Background(), "http", o.authority(), fetcher())
	if a.Result != policy.Successful || o.fetches.Load() != 1 {
		t.Errorf("nil Store: got %s after %d fetches, want successful after 1", a.Result, o.fetches.Load())
	}
	if ready, reason := s.Ready(); !ready || reason != "" {
		t.Errorf("nil Store Ready: got %v %q, want true \"\"", ready, reason)
	}
}

// TestFetchColdRoundTrips: a cold authority costs one round trip to the
// store before the origin fetch (the record, or the lock) and one after
// it (body, record, unlock, notification); another replica's store hit
// costs one.
func TestFetchColdRoundTrips(t *testing.T) {
	rs := startRedis(t)
	tests := []struct {
		name   string
		status int
		key    []byte
	}{
		{"successful", http.StatusOK, nil},
		{"successful, records authenticated", http.StatusOK, []byte("0123456789abcdef0123456789abcdef")},
		{"unavailable (no body)", http.StatusNotFound, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withKey := func(o *Options) { o.RecordKey = tc.key }
			ra, rb := newReplica(t, rs.URL(), withKey), newReplica(t, rs.URL(), withKey)
			ha, hb := &countHook{}, &countHook{}
			ra.rdb.AddHook(ha)
			rb.rdb.AddHook(hb)
			ctx := context.WithValue(context.Background(), onPath{}, true)
			// The first fetches load the scripts (NOSCRIPT, then EVAL).
			warm := newRobotsOrigin(t, "User-agent: *\nDisallow: /\n")
			ra.Fetch(ctx, "http", warm.authority(), fetcher())
			rb.Fetch(ctx, "http", warm.authority(), fetcher())
			ha.take()
			hb.take()

			o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
			o.mu.Lock()
			o.status = tc.status
			o.mu.Unlock()
			var before int
			var beforeNames []string
			origin := func(ctx context.Context, scheme, authority string) policy.Access {
				before, beforeNames, _, _ = ha.take()
				return fetcher()(ctx, scheme, authority)
			}
			first := ra.Fetch(ctx, "http", o.authority(), origin)
			after, afterNames, _, _ := ha.take()
			if before != 1 || after != 1 {
				t.Errorf("cold miss: %d round trips before the fetch (%v) and %d after it (%v), want 1 and 1", before, beforeNames, after, afterNames)
			}
			second := rb.Fetch(ctx, "http", o.authority(), fetcher())
			if got, names, _, _ := hb.take(); got != 1 {
				t.Errorf("store hit: %d round trips (%v), want 1", got, names)
			}
			if n := o.fetches.Load(); n != 1 || second.Result != first.Result || second.SHA256 != first.SHA256 {
				t.Errorf("store hit: %d origin fetches, result %s %x; want 1 fetch, %s %x", n, second.Result, second.SHA256, first.Result, first.SHA256)
			}
			if allowed(second, "Bot", "/private") != (tc.status == http.StatusNotFound) {
				t.Errorf("/private on the store hit: allowed %v, want %v", allowed(second, "Bot", "/private"), tc.status == http.StatusNotFound)
			}
			if n := ra.rdb.Exists(context.Background(), ra.lockKey("http://"+o.authority())).Val(); n != 0 {
				t.Errorf("lock after the fetch: %d keys, want none (released with the write)", n)
			}
		})
	}
}

// TestFetchWaiterWokenByNotification: a replica waiting for another's
// fetch returns as soon as the result is shared, woken by its
// notification, long before it would look again (its re-check is an
// hour here) and with no fetch of its own.
func TestFetchWaiterWokenByNotification(t *testing.T) {
	rs := startRedis(t)
	holder, waiter := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
	waiter.recheck = time.Hour
	for start := time.Now(); !waiter.wakes.subscribed.Load(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("waiter's subscription not confirmed after 5s")
		}
	}
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	o.mu.Lock()
	o.delay = 300 * time.Millisecond
	o.mu.Unlock()
	ctx := context.Background()
	shared := make(chan time.Time, 1)
	go func() {
		holder.Fetch(ctx, "http", o.authority(), fetcher())
		shared <- time.Now()
	}()
	lockKey := holder.lockKey("http://" + o.authority())
	for start := time.Now(); holder.rdb.Exists(ctx, lockKey).Val() == 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("holder took no lock in 5s")
		}
	}
	got := waiter.Fetch(ctx, "http", o.authority(), fetcher())
	returned := time.Now()
	sharedAt := <-shared
	if lag := returned.Sub(sharedAt); lag > 50*time.Millisecond {
		t.Errorf("waiter returned %v after the holder shared, want within 50ms (woken, not polling)", lag)
	}
	if n := o.fetches.Load(); n != 1 || allowed(got, "Bot", "/private") {
		t.Errorf("origin fetches %d, /private allowed %v; want 1 fetch, disallowed", n, allowed(got, "Bot", "/private"))
	}
	if waiter.counter("lock_waits") != 1 {
		t.Errorf("lock waits: got %v, want 1", waiter.counter("lock_waits"))
	}
}

// TestForgetUnreachable: a shared unreachable record fetched before a
// replica forgot the unreachable results (at its start, at a reload) is a
// miss for it: it fetches robots.txt itself and shares the new result,
// which the other replicas then use. Other results are not touched.
func TestForgetUnreachable(t *testing.T) {
	rs := startRedis(t)
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	o.status = http.StatusServiceUnavailable
	a, b := newReplica(t, rs.URL(), nil), newReplica(t, rs.URL(), nil)
	if got := a.Fetch(context.Background(), "http", o.authority(), fetcher()); got.Result != policy.Unreachable {
		t.Fatalf("first fetch: %s, want unreachable", got.Result)
	}
	if got := b.Fetch(context.Background(), "http", o.authority(), fetcher()); got.Result != policy.Unreachable || o.fetches.Load() != 1 {
		t.Fatalf("b before: %s after %d origin fetches, want the shared unreachable record", got.Result, o.fetches.Load())
	}
	o.mu.Lock()
	o.status = http.StatusOK // the operator fixed the origin
	o.mu.Unlock()
	time.Sleep(time.Millisecond) // the record's fetch is strictly before
	b.ForgetUnreachable()
	if got := b.Fetch(context.Background(), "http", o.authority(), fetcher()); got.Result != policy.Successful || o.fetches.Load() != 2 {
		t.Fatalf("b after ForgetUnreachable: %s after %d origin fetches, want a fetch of its own, successful", got.Result, o.fetches.Load())
	}
	if got := a.Fetch(context.Background(), "http", o.authority(), fetcher()); got.Result != policy.Successful || o.fetches.Load() != 2 {
		t.Errorf("a: %s after %d origin fetches, want b's shared successful result", got.Result, o.fetches.Load())
	}
	late := newReplica(t, rs.URL(), nil) // started after the successful fetch: uses it
	if got := late.Fetch(context.Background(), "http", o.authority(), fetcher()); got.Result != policy.Successful || o.fetches.Load() != 2 {
		t.Errorf("a replica started later: %s after %d origin fetches, want the shared successful result", got.Result, o.fetches.Load())
	}
	var none *Store
	none.ForgetUnreachable() // nil-safe, as Fetch
}

// TestFetchCallerGivesUp: a crawler that disconnects while its replica
// asks the store for robots.txt says nothing of the store, which stays
// up and shared (the same rule as TestGateCallerGivesUp).
func TestFetchCallerGivesUp(t *testing.T) {
	rs := startRedis(t)
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	r := newReplica(t, rs.URL(), nil)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	r.Fetch(gone, "http", o.authority(), fetcher())
	if r.counter("up") != 1 || r.counter("errors/lock") != 0 || r.counter("fallbacks/robots") != 0 {
		t.Errorf("after a caller gave up: up %v, lock errors %v, robots fallbacks %v; want 1, 0, 0",
			r.counter("up"), r.counter("errors/lock"), r.counter("fallbacks/robots"))
	}
	a := r.Fetch(context.Background(), "http", o.authority(), fetcher())
	if a.Result != policy.Successful || r.counter("up") != 1 {
		t.Errorf("the next caller: got %s, store up %v; want successful from the shared store, up", a.Result, r.counter("up"))
	}
}
