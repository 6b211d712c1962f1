package proxy_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// throttledPinner returns policy options pinning alice to AlphaBot and bob
// to BetaBot (password "pw-" + name, bcrypt cost), with throttle o on clock
// (nil: time.Now).
func throttledPinner(t testing.TB, cost int, o identity.ThrottleOptions, clock *testkit.Clock) func(*policy.Options) {
	t.Helper()
	var users []identity.User
	for name, token := range map[string]string{"alice": "AlphaBot", "bob": "BetaBot"} {
		hash, err := bcrypt.GenerateFromPassword([]byte("pw-"+name), cost)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, identity.User{Name: name, PasswordHash: hash, Token: token})
	}
	po := identity.PinOptions{Users: users, Required: true, Throttle: o}
	if clock != nil {
		po.Now = clock.Now
	}
	p, err := identity.NewPinner(po)
	if err != nil {
		t.Fatal(err)
	}
	return func(o *policy.Options) { o.Pinner = p }
}

// connectStatus sends a CONNECT with Proxy-Authorization for user:password
// on a raw connection and returns the response.
func connectStatus(t *testing.T, h *harness, authority, user, password string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", h.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	creds := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", authority, authority, creds)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	resp.Body.Close()
	return resp
}

// TestProxyAuthThrottled: after the burst of failures a client gets 429
// with Retry-After and no challenge, on plain requests and CONNECT, with
// the audit reason and the metric; remembered credentials still get
// through from the same address, and the client recovers with time.
func TestProxyAuthThrottled(t *testing.T) {
	o := newOrigin(t, serveRobots(twoBotsRobots))
	tlsOrigin := newTLSOrigin(t, serveRobots(twoBotsRobots))
	clock := testkit.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	h := newHarness(t, harnessOptions{policy: throttledPinner(t, bcrypt.MinCost,
		identity.ThrottleOptions{FailuresPerMinute: 6, Burst: 3, MaxConcurrentChecks: 2}, clock)})
	alice, bob := as(h, "alice", "pw-alice", nil), as(h, "bob", "wrong", nil)
	if got, _ := status(t, alice, o.URL+"/y", "AlphaBot/1.0"); got != 200 {
		t.Fatalf("alice before the flood: got %d, want 200", got)
	}
	steps := []struct {
		name   string
		client *http.Client
		want   int
		reason string
		retry  string
	}{
		{"failure 1", bob, 407, "proxy-auth-failed", ""},
		{"failure 2", bob, 407, "proxy-auth-failed", ""},
		{"failure 3", bob, 407, "proxy-auth-failed", ""},
		{"throttled", bob, 429, "proxy-auth-throttled", "10"},
		{"throttled again", bob, 429, "proxy-auth-throttled", "10"},
		{"alice, remembered, from the same address", alice, 200, "", ""},
	}
	for _, s := range steps {
		req, _ := http.NewRequest("GET", o.URL+"/y", nil)
		req.Header.Set("User-Agent", "AlphaBot/1.0")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var body strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
		resp.Body.Close()
		hdr := resp.Header
		if resp.StatusCode != s.want || hdr.Get(proxy.HeaderReason) != s.reason || hdr.Get("Retry-After") != s.retry {
			t.Errorf("%s: got %d reason %q Retry-After %q, want %d %q %q", s.name, resp.StatusCode, hdr.Get(proxy.HeaderReason), hdr.Get("Retry-After"), s.want, s.reason, s.retry)
		}
		if s.want == 429 && (hdr.Get("Proxy-Authenticate") != "" || !strings.Contains(body.String(), "retry in 10 seconds")) {
			t.Errorf("%s: got Proxy-Authenticate %q body %q, want no challenge and a body naming the wait", s.name, hdr.Get("Proxy-Authenticate"), body.String())
		}
	}
	authority := strings.TrimPrefix(tlsOrigin.URL, "https://")
	if resp := connectStatus(t, h, authority, "bob", "wrong"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "10" {
		t.Errorf("throttled CONNECT: got %d Retry-After %q, want 429 10", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	lines := h.audit.WaitLines(t, 8)
	throttled := 0
	for _, l := range lines {
		if l["reason"] == "proxy-auth-throttled" {
			throttled++
			assertFields(t, l, map[string]any{"status": 429.0, "user": "bob", "decision": "deny"})
		}
	}
	if throttled != 3 {
		t.Errorf("got %d audit lines with reason proxy-auth-throttled, want 3: %v", throttled, lines)
	}
	if got := h.plainCounter(t, "robotsproxy_auth_throttled_total"); got != 3 {
		t.Errorf("robotsproxy_auth_throttled_total: got %v, want 3", got)
	}
	if got := h.counter(t, "robotsproxy_requests_total", "proxy-auth-throttled"); got != 3 {
		t.Errorf("robotsproxy_requests_total{reason=proxy-auth-throttled}: got %v, want 3", got)
	}
	// One failure is forgiven every 10 s.
	clock.Advance(10 * time.Second)
	if got, hdr := status(t, bob, o.URL+"/y", "AlphaBot/1.0"); got != 407 || hdr.Get("Proxy-Authenticate") == "" {
		t.Errorf("10 s later: got %d, want 407 with a challenge", got)
	}
	if got, _ := status(t, as(h, "bob", "pw-bob", nil), o.URL+"/y", "BetaBot/1.0"); got != 429 {
		t.Errorf("bob's right password from the throttled address, not remembered: got %d, want 429", got)
	}
	if o.Count("/y") != 2 {
		t.Errorf("origin saw /y %d times, want 2 (alice's requests only)", o.Count("/y"))
	}
}

// plainCounter returns the value of the counter name, which has no labels.
func (h *harness) plainCounter(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
