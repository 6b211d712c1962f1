package policy_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// throttledPinner has alice and bob ("<name>-pw") and throttles failures
// as o says.
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

// TestAuthenticateThrottled: the policy turns a throttled check into a
// denial with reason proxy-auth-throttled and the wait, not a 407.
func TestAuthenticateThrottled(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p, f := newStubPolicy("", policy.Options{Pinner: throttledPinner(t, clock, identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 1})})
	client := netip.MustParseAddr("192.0.2.1")
	if _, d := p.Authenticate(t.Context(), testkit.BasicAuth("alice", "nope"), client); d == nil || d.Reason != auditlog.ReasonAuthFailed || d.RetryAfter != 0 || d.RetryAfterSeconds() != 0 {
		t.Fatalf("first failure: got %+v, want reason %q and no RetryAfter", d, auditlog.ReasonAuthFailed)
	}
	clock.Advance(500 * time.Millisecond)
	_, d := p.Authenticate(t.Context(), testkit.BasicAuth("alice", "nope"), client)
	if d == nil || d.Allowed || d.Reason != auditlog.ReasonAuthThrottled || d.NeedsAuth() {
		t.Fatalf("second failure: got %+v, want a denial with reason %q that is not a 407", d, auditlog.ReasonAuthThrottled)
	}
	if d.RetryAfter != 9500*time.Millisecond || d.RetryAfterSeconds() != 10 {
		t.Errorf("got RetryAfter %v (%d s), want 9.5s (10 s)", d.RetryAfter, d.RetryAfterSeconds())
	}
	if d.Identity.User != "alice" || d.Identity.Token != "*" || !errors.Is(d.Err, policy.ErrProxyAuthThrottled) || strings.Contains(d.Err.Error(), "nope") {
		t.Errorf("got Identity %+v Err %v, want user alice, token *, an error wrapping ErrProxyAuthThrottled without the password", d.Identity, d.Err)
	}
	if len(f.Calls()) != 0 {
		t.Errorf("Authenticate fetched robots.txt: %q", f.Calls())
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		reason policy.Reason
		after  time.Duration
		want   int64
	}{
		{auditlog.ReasonAuthThrottled, 0, 1},
		{auditlog.ReasonAuthThrottled, time.Nanosecond, 1},
		{auditlog.ReasonAuthThrottled, time.Second, 1},
		{auditlog.ReasonAuthThrottled, time.Second + time.Millisecond, 2},
		{auditlog.ReasonAuthThrottled, 10 * time.Second, 10},
		{auditlog.ReasonAuthThrottled, 2 * time.Hour, 7200},
		{auditlog.ReasonAuthFailed, 10 * time.Second, 0},
		{auditlog.ReasonRule, 0, 0},
	}
	for _, tt := range tests {
		d := policy.Decision{Reason: tt.reason, RetryAfter: tt.after}
		if got := d.RetryAfterSeconds(); got != tt.want {
			t.Errorf("Decision{Reason %q, RetryAfter %v}.RetryAfterSeconds(): got %d, want %d", tt.reason, tt.after, got, tt.want)
		}
	}
}

// User-Agent headers the policy tests send.
const (
	uaExampleBot    = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"
	uaChromeWindows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)
