package proxy_test

import (
	"crypto/tls"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

const twoBotsRobots = "User-agent: AlphaBot\nDisallow: /x\n\nUser-agent: BetaBot\nDisallow: /y\n\nUser-agent: *\nDisallow: /\n"

// pinner returns policy options pinning alice to AlphaBot and bob to
// BetaBot (password "pw-" + name), plus the given ranges.
func pinner(t *testing.T, required bool, ranges ...identity.ClientRange) func(*policy.Options) {
	t.Helper()
	var users []identity.User
	for name, token := range map[string]string{"alice": "AlphaBot", "bob": "BetaBot"} {
		hash, err := bcrypt.GenerateFromPassword([]byte("pw-"+name), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, identity.User{Name: name, PasswordHash: hash, Token: token})
	}
	p, err := identity.NewPinner(identity.PinOptions{Users: users, Ranges: ranges, Required: required})
	if err != nil {
		t.Fatal(err)
	}
	return func(o *policy.Options) { o.Pinner = p }
}

// as returns a client of h's proxy that authenticates as user:password.
func as(h *harness, user, password string, tlsCfg *tls.Config) *http.Client {
	u := *h.proxyURL
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&u), TLSClientConfig: tlsCfg}}
}

func status(t *testing.T, c *http.Client, target, ua string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestPinnedIdentities: the same request with two credentials gets two
// decisions, a spoofed User-Agent changes nothing, and the pin carries into
// intercepted tunnels.
func TestPinnedIdentities(t *testing.T) {
	plain := newOrigin(t, serveRobots(twoBotsRobots))
	h := newHarness(t, harnessOptions{policy: pinner(t, false)})
	tlsOrigin := newTLSOrigin(t, serveRobots(twoBotsRobots))
	hi, _, _ := interceptHarness(t, originTLS(tlsOrigin), tlsOrigin, pinner(t, false))
	caTLS := hi.client.Transport.(*http.Transport).TLSClientConfig
	cases := []struct {
		user, ua string
		path     string
		want     int
	}{
		{"alice", "AlphaBot/1.0", "/x", 403},
		{"bob", "BetaBot/1.0", "/x", 200},
		{"alice", "AlphaBot/1.0", "/y", 200},
		{"bob", "BetaBot/1.0", "/y", 403},
		{"alice", "BetaBot/1.0", "/x", 403}, // spoofed User-Agent: still AlphaBot
		{"bob", "AlphaBot/1.0 (like AlphaBot)", "/x", 200},
		{"bob", "", "/x", 200},
	}
	for _, c := range cases {
		for _, mode := range []string{"http", "https-intercepted"} {
			target, harness, cfg := plain.URL+c.path, h, (*tls.Config)(nil)
			if mode != "http" {
				target, harness, cfg = tlsOrigin.URL+c.path, hi, caTLS
			}
			got, hdr := status(t, as(harness, c.user, "pw-"+c.user, cfg), target, c.ua)
			if got != c.want {
				t.Errorf("%s %s as %s with UA %q: got %d, want %d", mode, c.path, c.user, c.ua, got, c.want)
			}
			if got == 403 && hdr.Get(proxy.HeaderToken) != map[string]string{"alice": "AlphaBot", "bob": "BetaBot"}[c.user] {
				t.Errorf("%s: 403 names token %q", mode, hdr.Get(proxy.HeaderToken))
			}
		}
	}
	for _, l := range h.audit.Lines(t) {
		if l["token_source"] != "credentials" || l["user"] == nil {
			t.Errorf("audit line without the pinned source and user: %v", l)
		}
	}
}

// TestProxyAuth407: missing credentials when required, and wrong ones
// always, get 407 with a Basic challenge, on plain requests and CONNECT.
func TestProxyAuth407(t *testing.T) {
	o := newOrigin(t, serveRobots(twoBotsRobots))
	tlsOrigin := newTLSOrigin(t, serveRobots(twoBotsRobots))
	required := newHarness(t, harnessOptions{policy: pinner(t, true)})
	optional := newHarness(t, harnessOptions{policy: pinner(t, false)})
	hi, _, _ := interceptHarness(t, originTLS(tlsOrigin), tlsOrigin, pinner(t, true))
	cases := []struct {
		name           string
		h              *harness
		user, password string
		want           int
		reason         string
	}{
		{"required, none", required, "", "", 407, "proxy-auth-required"},
		{"required, wrong password", required, "alice", "nope", 407, "proxy-auth-failed"},
		{"required, unknown user", required, "mallory", "pw-mallory", 407, "proxy-auth-failed"},
		{"required, right", required, "bob", "pw-bob", 200, ""},
		{"optional, none", optional, "", "", 403, "rule"}, // falls back to the UA: "*" disallows /
		{"optional, wrong password", optional, "alice", "nope", 407, "proxy-auth-failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, hdr := status(t, as(c.h, c.user, c.password, nil), o.URL+"/x", "SomeBot/1.0")
			if got != c.want || hdr.Get(proxy.HeaderReason) != c.reason {
				t.Errorf("got %d %q, want %d %q", got, hdr.Get(proxy.HeaderReason), c.want, c.reason)
			}
			if got == 407 && hdr.Get("Proxy-Authenticate") != `Basic realm="robotsproxy", charset="UTF-8"` {
				t.Errorf("Proxy-Authenticate %q", hdr.Get("Proxy-Authenticate"))
			}
		})
	}
	if o.Count("/x") != 1 {
		t.Errorf("origin saw /x %d times, want 1 (only bob)", o.Count("/x"))
	}
	lines := required.audit.Lines(t)
	if len(lines) < 2 || lines[1]["reason"] != "proxy-auth-failed" || lines[1]["user"] != "alice" {
		t.Errorf("the failed attempt is not logged with its user: %v", lines)
	}
	// CONNECT without credentials: 407 before any tunnel.
	_, err := as(hi, "", "", nil).Get(tlsOrigin.URL + "/y")
	if err == nil || tlsOrigin.Count("/y") != 0 {
		t.Errorf("CONNECT without credentials: err %v, origin hits %d; want a 407 refusal", err, tlsOrigin.Count("/y"))
	}
	if l := hi.audit.WaitLines(t, 1); len(l) != 1 || l[0]["method"] != "CONNECT" || l[0]["status"] != 407.0 {
		t.Errorf("CONNECT 407 audit: %v", l)
	}
}

// TestClientRangePin: a client range pins the token whatever the UA;
// credentials win over the range.
func TestClientRangePin(t *testing.T) {
	o := newOrigin(t, serveRobots(twoBotsRobots))
	h := newHarness(t, harnessOptions{policy: pinner(t, true,
		identity.ClientRange{Prefix: netip.MustParsePrefix("127.0.0.0/8"), Token: "BetaBot"})})
	if got, hdr := status(t, as(h, "", "", nil), o.URL+"/y", "AlphaBot/1.0"); got != 403 || hdr.Get(proxy.HeaderToken) != "BetaBot" {
		t.Errorf("range-pinned /y: got %d as %q, want 403 as BetaBot", got, hdr.Get(proxy.HeaderToken))
	}
	if got, _ := status(t, as(h, "", "", nil), o.URL+"/x", "AlphaBot/1.0"); got != 200 {
		t.Errorf("range-pinned /x: got %d, want 200", got)
	}
	if got, _ := status(t, as(h, "alice", "pw-alice", nil), o.URL+"/x", "BetaBot/1.0"); got != 403 {
		t.Errorf("credentials in a pinned range: got %d, want 403 as AlphaBot", got)
	}
	if l := h.audit.Lines(t); l[0]["token_source"] != "client-range" || l[2]["token_source"] != "credentials" {
		t.Errorf("token sources: %v / %v", l[0]["token_source"], l[2]["token_source"])
	}
}

// TestConnectPolicy: ports outside the allowed ones and a refusing
// configuration get 403 to CONNECT; denied hosts get 403 everywhere.
func TestConnectPolicy(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	cases := []struct {
		name   string
		pol    func(*policy.Options)
		reason string
	}{
		{"default ports", nil, "connect-port"},
		{"refuse", func(po *policy.Options) { connectPorts(o)(po); po.RefuseConnect = true }, "connect-refused"},
		{"denied host", func(po *policy.Options) { connectPorts(o)(po); po.DenyHosts = []string{"127.0.0.1"} }, "host-denied"},
		{"not allowed host", func(po *policy.Options) { connectPorts(o)(po); po.AllowHosts = []string{".example.com"} }, "host-denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{tls: originTLS(o), policy: c.pol})
			if _, err := h.client.Get(o.URL + "/"); err == nil {
				t.Fatal("CONNECT succeeded")
			}
			l := h.audit.WaitLines(t, 1)
			if len(l) != 1 || l[0]["reason"] != c.reason || l[0]["status"] != 403.0 {
				t.Errorf("audit %v, want one 403 %s", l, c.reason)
			}
		})
	}
	if o.RobotsHits() != 0 {
		t.Error("a refused CONNECT fetched robots.txt")
	}
}
