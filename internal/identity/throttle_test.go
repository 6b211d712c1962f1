package identity_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

func bcryptHashCost(t testing.TB, password string, cost int) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// throttledPinner has alice and bob ("<name>-pw") and throttles failures at
// 6 a minute (one every 10 s), 3 at once.
func throttledPinner(t testing.TB, clock *testkit.Clock, o identity.ThrottleOptions) *identity.Pinner {
	t.Helper()
	p, err := identity.NewPinner(identity.PinOptions{
		Users: []identity.User{
			{Name: "alice", PasswordHash: testkit.BcryptHash(t, "alice-pw"), Token: "AliceBot"},
			{Name: "bob", PasswordHash: testkit.BcryptHash(t, "bob-pw"), Token: "BobBot"},
		},
		Throttle: o,
		Now:      clock.Now,
	})
	if err != nil {
		t.Fatalf("NewPinner: %v", err)
	}
	return p
}

var sixPerMinute = identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 3}

// attempt is one step of a throttle scenario.
type attempt struct {
	after    time.Duration // the clock moves this much first
	header   string
	client   string
	want     string        // "ok", "failed" or "throttled"
	retry    time.Duration // the RetryAfter wanted when throttled
	noBcrypt bool          // answered without bcrypt (memo, malformed header)
}

func TestThrottle(t *testing.T) {
	a, b, c, d := "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"
	wrong := func(user, client string) attempt {
		return attempt{header: testkit.BasicAuth(user, "wrong"), client: client, want: "failed"}
	}
	right := func(user, client string) attempt {
		return attempt{header: testkit.BasicAuth(user, user+"-pw"), client: client, want: "ok"}
	}
	throttled := func(at attempt, retry time.Duration) attempt {
		at.want, at.retry = "throttled", retry
		return at
	}
	tests := []struct {
		name     string
		o        identity.ThrottleOptions
		attempts []attempt
	}{
		{name: "per client address", o: sixPerMinute, attempts: []attempt{
			wrong("alice", a), wrong("bob", a), wrong("mallory", a),
			throttled(right("bob", a), 10*time.Second), // even the right password, unless remembered
			throttled(wrong("carol", a), 10*time.Second),
			wrong("alice", b), // other clients are not throttled
			right("bob", b),
		}},
		{name: "per user name", o: sixPerMinute, attempts: []attempt{
			wrong("alice", a), wrong("alice", b), wrong("alice", c),
			throttled(wrong("alice", d), 10*time.Second),
			throttled(right("alice", d), 10*time.Second),
			right("bob", d), // other users are not throttled
		}},
		{name: "unknown user names are throttled like known ones", o: sixPerMinute, attempts: []attempt{
			wrong("mallory", a), wrong("mallory", b), wrong("mallory", c),
			throttled(wrong("mallory", d), 10*time.Second),
		}},
		{name: "recovery after time", o: sixPerMinute, attempts: []attempt{
			wrong("alice", a), wrong("alice", a), wrong("alice", a),
			throttled(wrong("alice", a), 10*time.Second),
			{after: 4 * time.Second, header: testkit.BasicAuth("alice", "x"), client: a, want: "throttled", retry: 6 * time.Second},
			{after: 6 * time.Second, header: testkit.BasicAuth("alice", "x"), client: a, want: "failed"}, // one token back
			throttled(wrong("alice", a), 10*time.Second),
			{after: 30 * time.Second, header: testkit.BasicAuth("alice", "x"), client: a, want: "failed"}, // full again
			wrong("alice", a), wrong("alice", a),
			throttled(wrong("alice", a), 10*time.Second),
			{after: time.Hour, header: testkit.BasicAuth("alice", "alice-pw"), client: a, want: "ok"},
		}},
		{name: "remembered credentials are never throttled", o: sixPerMinute, attempts: []attempt{
			right("alice", a),
			wrong("alice", a), wrong("alice", a), wrong("alice", a),
			throttled(wrong("alice", a), 10*time.Second),
			{header: testkit.BasicAuth("alice", "alice-pw"), client: a, want: "ok", noBcrypt: true},
			{header: testkit.BasicAuth("alice", "alice-pw"), client: b, want: "ok", noBcrypt: true},
			// Another spelling of the same credentials is not remembered.
			throttled(attempt{header: " " + testkit.BasicAuth("alice", "alice-pw"), client: a}, 10*time.Second),
		}},
		{name: "successes take no tokens", o: sixPerMinute, attempts: []attempt{
			right("alice", a),
			{header: testkit.BasicAuth("alice", "alice-pw") + " ", client: a, want: "ok"},
			{header: testkit.BasicAuth("alice", "alice-pw") + "  ", client: a, want: "ok"},
			{header: testkit.BasicAuth("alice", "alice-pw") + "   ", client: a, want: "ok"},
			wrong("alice", a), wrong("alice", a), wrong("alice", a),
			throttled(wrong("alice", a), 10*time.Second),
		}},
		{name: "malformed headers count against the client", o: sixPerMinute, attempts: []attempt{
			{header: "Bearer x", client: a, want: "failed", noBcrypt: true},
			{header: "Basic !!", client: a, want: "failed", noBcrypt: true},
			{header: "Basic " + "YWxpY2U=", client: a, want: "failed", noBcrypt: true}, // "alice", no colon
			throttled(right("alice", a), 10*time.Second),
			right("alice", b),
		}},
		{name: "IPv6 clients by their /64", o: sixPerMinute, attempts: []attempt{
			wrong("alice", "2001:db8::1"), wrong("bob", "2001:db8::2"), wrong("carol", "2001:db8::3"),
			throttled(right("bob", "2001:db8::ffff:1"), 10*time.Second),
			right("bob", "2001:db8:0:1::1"),
		}},
		{name: "IPv4-mapped clients are their IPv4 address", o: sixPerMinute, attempts: []attempt{
			wrong("x", "::ffff:192.0.2.1"), wrong("y", a), wrong("z", "::ffff:192.0.2.1"),
			throttled(wrong("alice", a), 10*time.Second),
		}},
		{name: "disabled", o: identity.ThrottleOptions{}, attempts: []attempt{
			wrong("alice", a), wrong("alice", a), wrong("alice", a), wrong("alice", a), wrong("alice", a),
			wrong("alice", a), right("alice", a),
		}},
		{name: "a slower rate waits longer", o: identity.ThrottleOptions{FailuresPerMinute: 0.5, Burst: 1}, attempts: []attempt{
			wrong("alice", a),
			throttled(wrong("alice", a), 2*time.Minute),
			{after: 119 * time.Second, header: testkit.BasicAuth("alice", "x"), client: a, want: "throttled", retry: time.Second},
			{after: time.Second, header: testkit.BasicAuth("alice", "x"), client: a, want: "failed"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			p := throttledPinner(t, clock, tt.o)
			bc := identity.CountBcrypt(p)
			for i, at := range tt.attempts {
				clock.Advance(at.after)
				before, _ := bc.Counts()
				pin, err := p.Pin(t.Context(), at.header, netip.MustParseAddr(at.client))
				calls, _ := bc.Counts()
				desc := fmt.Sprintf("attempt %d: Pin(%q, %s)", i, at.header, at.client)
				checkAttempt(t, desc, at, pin, err, calls-before)
			}
		})
	}
}

func checkAttempt(t *testing.T, desc string, at attempt, pin policy.Pin, err error, bcryptCalls int) {
	t.Helper()
	var te *policy.ThrottledError
	switch got := errors.As(err, &te); {
	case at.want == "ok" && (err != nil || pin.Token == ""):
		t.Errorf("%s: got %+v, %v, want a pin", desc, pin, err)
	case at.want == "failed" && (!errors.Is(err, policy.ErrProxyAuthFailed) || got):
		t.Errorf("%s: got %+v, %v, want ErrProxyAuthFailed", desc, pin, err)
	case at.want == "throttled" && (!got || !errors.Is(err, policy.ErrProxyAuthThrottled) || errors.Is(err, policy.ErrProxyAuthFailed)):
		t.Errorf("%s: got %+v, %v, want a *ThrottledError", desc, pin, err)
	case at.want == "throttled" && te.RetryAfter != at.retry:
		t.Errorf("%s: got RetryAfter %v, want %v", desc, te.RetryAfter, at.retry)
	}
	want := 1
	if at.want == "throttled" || at.noBcrypt {
		want = 0
	}
	if bcryptCalls != want {
		t.Errorf("%s (want %s): got %d bcrypt calls, want %d", desc, at.want, bcryptCalls, want)
	}
}

// TestThrottleConcurrentFailures: failures that arrive at once cannot
// overrun a bucket, because running checks hold their token.
func TestThrottleConcurrentFailures(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := throttledPinner(t, clock, identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 5, MaxConcurrentChecks: 2})
	bc := identity.CountBcrypt(p)
	var wg sync.WaitGroup
	var mu sync.Mutex
	results := map[string]int{}
	for i := range 20 {
		wg.Go(func() {
			// 20 different wrong passwords: identical headers would share one check.
			_, err := p.Pin(t.Context(), testkit.BasicAuth("alice", fmt.Sprintf("wrong-%d", i)), netip.MustParseAddr("192.0.2.1"))
			kind := "failed"
			if errors.Is(err, policy.ErrProxyAuthThrottled) {
				kind = "throttled"
			}
			mu.Lock()
			results[kind]++
			mu.Unlock()
		})
	}
	wg.Wait()
	calls, maxRunning := bc.Counts()
	if results["failed"] != 5 || results["throttled"] != 15 || calls != 5 {
		t.Errorf("20 wrong passwords at once, burst 5: got %v and %d bcrypt calls, want 5 failed, 15 throttled, 5 calls", results, calls)
	}
	if maxRunning > 2 {
		t.Errorf("got %d bcrypt calls at once, want at most 2", maxRunning)
	}
}

// TestConcurrentSameCredentials: a crawler opening many connections at once
// with its correct credentials (not yet remembered) is never throttled:
// concurrent checks of one header share one bcrypt call and one token.
// Before, the in-flight checks held the burst and the sixth got 429.
func TestConcurrentSameCredentials(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := throttledPinner(t, clock, identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 5, MaxConcurrentChecks: 2})
	bc := identity.CountBcrypt(p)
	var wg sync.WaitGroup
	var failures atomic.Int64
	start := make(chan struct{})
	for range 20 {
		wg.Go(func() {
			<-start
			if _, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pw"), netip.MustParseAddr("192.0.2.1")); err != nil {
				failures.Add(1)
				t.Log(err)
			}
		})
	}
	// The checks queue behind busy bcrypt slots, as under load, so that
	// all 20 are in flight at once.
	release := identity.HoldCheckSlots(p, 2)
	close(start)
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	if calls, _ := bc.Counts(); failures.Load() != 0 || calls > 5 {
		t.Errorf("20 concurrent logins with the right password: %d failed, %d bcrypt calls; want 0 failed, at most 5 calls", failures.Load(), calls)
	}
}

// TestPinBoundsConcurrentBcrypt counts the bcrypt comparisons running at
// once while 16 goroutines send wrong passwords (throttling off).
func TestPinBoundsConcurrentBcrypt(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, err := identity.NewPinner(identity.PinOptions{
				Users:    []identity.User{{Name: "alice", PasswordHash: bcryptHashCost(t, "alice-pw", 6), Token: "AliceBot"}},
				Throttle: identity.ThrottleOptions{MaxConcurrentChecks: n},
			})
			if err != nil {
				t.Fatal(err)
			}
			bc := identity.CountBcrypt(p)
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Go(func() {
					for i := range 3 {
						client := netip.AddrFrom4([4]byte{192, 0, 2, byte(g)})
						if _, err := p.Pin(t.Context(), testkit.BasicAuth(fmt.Sprint("user", g, i), "x"), client); !errors.Is(err, policy.ErrProxyAuthFailed) {
							t.Errorf("Pin: got %v, want ErrProxyAuthFailed", err)
						}
					}
				})
			}
			wg.Wait()
			calls, maxRunning := bc.Counts()
			if calls != 48 || maxRunning > n {
				t.Errorf("max_concurrent_checks %d: got %d calls, at most %d at once; want 48 calls, at most %d at once", n, calls, maxRunning, n)
			}
			t.Logf("max_concurrent_checks %d: %d bcrypt calls at once at most", n, maxRunning)
		})
	}
}

// TestPinCheckSlotWaitEndsWithContext: a client that goes away stops
// waiting for a bcrypt slot, no bcrypt runs and no token is taken.
func TestPinCheckSlotWaitEndsWithContext(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := throttledPinner(t, clock, identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 1, MaxConcurrentChecks: 1})
	bc := identity.CountBcrypt(p)
	release := identity.HoldCheckSlots(p, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	client := netip.MustParseAddr("192.0.2.1")
	_, err := p.Pin(ctx, testkit.BasicAuth("alice", "wrong"), client)
	if !errors.Is(err, policy.ErrProxyAuthFailed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the deadline: got %v, want ErrProxyAuthFailed and DeadlineExceeded", err)
	}
	release()
	// The bucket (burst 1) is still full: this check runs, then the next is
	// throttled.
	if _, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "wrong"), client); !errors.Is(err, policy.ErrProxyAuthFailed) {
		t.Errorf("after the slot is free: got %v, want ErrProxyAuthFailed", err)
	}
	if _, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "wrong"), client); !errors.Is(err, policy.ErrProxyAuthThrottled) {
		t.Errorf("second failure: got %v, want ErrProxyAuthThrottled", err)
	}
	if calls, _ := bc.Counts(); calls != 1 {
		t.Errorf("got %d bcrypt calls, want 1", calls)
	}
}

// TestThrottleBoundsKeys: an attacker rotating addresses cannot grow the
// throttle past its bound, and refilled keys are dropped.
func TestThrottleBoundsKeys(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := throttledPinner(t, clock, sixPerMinute)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	fail := func(i int) error { _, err := p.Pin(t.Context(), "Bearer x", addr(i)); return err }
	for range 3 {
		_ = fail(0)
	}
	if err := fail(0); !errors.Is(err, policy.ErrProxyAuthThrottled) {
		t.Fatalf("fourth failure: got %v, want ErrProxyAuthThrottled", err)
	}
	for i := 1; i <= identity.ThrottleMaxKeys+500; i++ {
		if err := fail(i); !errors.Is(err, policy.ErrProxyAuthFailed) {
			t.Fatalf("address %d: got %v, want ErrProxyAuthFailed", i, err)
		}
		if n := identity.TrackedKeys(p); n > identity.ThrottleMaxKeys {
			t.Fatalf("after %d addresses: got %d tracked keys, want at most %d", i+1, n, identity.ThrottleMaxKeys)
		}
	}
	if n := identity.TrackedKeys(p); n != identity.ThrottleMaxKeys {
		t.Errorf("got %d tracked keys, want %d", n, identity.ThrottleMaxKeys)
	}
	// The least recently used key was forgotten: its bucket is full again.
	if err := fail(0); !errors.Is(err, policy.ErrProxyAuthFailed) {
		t.Errorf("the first address after %d others: got %v, want ErrProxyAuthFailed (forgotten)", identity.ThrottleMaxKeys+500, err)
	}
	// Once every bucket has refilled, each new key drops two old ones.
	clock.Advance(time.Minute)
	for i := range 100 {
		_ = fail(1_000_000 + i)
	}
	if got, want := identity.TrackedKeys(p), identity.ThrottleMaxKeys-100; got != want {
		t.Errorf("after the buckets refilled and 100 new keys: got %d tracked keys, want %d", got, want)
	}
}

func TestThrottleOptionsErrors(t *testing.T) {
	tests := []struct {
		o    identity.ThrottleOptions
		want string // "" for valid
	}{
		{identity.ThrottleOptions{}, ""},
		{identity.ThrottleOptions{FailuresPerMinute: 10, Burst: 5, MaxConcurrentChecks: 2}, ""},
		{identity.ThrottleOptions{FailuresPerMinute: 0, Burst: 0, MaxConcurrentChecks: 1}, ""},
		{identity.ThrottleOptions{FailuresPerMinute: -1, Burst: 5}, "failures per minute"},
		{identity.ThrottleOptions{FailuresPerMinute: math.NaN(), Burst: 5}, "failures per minute"},
		{identity.ThrottleOptions{FailuresPerMinute: math.Inf(1), Burst: 5}, "failures per minute"},
		{identity.ThrottleOptions{FailuresPerMinute: 10, Burst: 0}, "burst"},
		{identity.ThrottleOptions{MaxConcurrentChecks: -1}, "max concurrent checks"},
	}
	for _, tt := range tests {
		_, err := identity.NewPinner(identity.PinOptions{Throttle: tt.o})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("NewPinner(Throttle %+v): got %v, want no error", tt.o, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "auth throttle")):
			t.Errorf("NewPinner(Throttle %+v): got %v, want an error naming %q", tt.o, err, tt.want)
		}
	}
}

// TestSharedCheckOutlivesItsFirstCaller: logins with the same header share
// one password check; the first of them giving up (its client went away)
// does not fail the check for the others.
func TestSharedCheckOutlivesItsFirstCaller(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := throttledPinner(t, clock, identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 5, MaxConcurrentChecks: 1})
	release := identity.HoldCheckSlots(p, 1) // the check waits for a slot
	first, cancel := context.WithCancel(t.Context())
	firstErr := make(chan error, 1)
	go func() {
		_, err := p.Pin(first, testkit.BasicAuth("alice", "alice-pw"), netip.MustParseAddr("192.0.2.1"))
		firstErr <- err
	}()
	time.Sleep(20 * time.Millisecond) // the first caller starts the shared check
	secondErr := make(chan error, 1)
	go func() {
		_, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pw"), netip.MustParseAddr("192.0.2.2"))
		secondErr <- err
	}()
	time.Sleep(20 * time.Millisecond) // and the second joins it
	cancel()
	if err := <-firstErr; err == nil {
		t.Errorf("the caller that gave up: got no error")
	}
	release()
	if err := <-secondErr; err != nil {
		t.Errorf("the caller still waiting: %v; want authenticated (the first caller's cancellation failed the shared check)", err)
	}
}
