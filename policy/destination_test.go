package policy_test

import (
	"context"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// pinRobots has a group for the pinned token, one for ExampleBot and one
// for everybody else; its rules are on lines 2, 5, 6 and 9.
const pinRobots = "User-agent: PinnedBot\nDisallow: /pinned-only\n\nUser-agent: ExampleBot\nDisallow: /private\nDisallow: /pinned-ok\n\nUser-agent: *\nDisallow: /\n"

// countingFetch is a FetchFunc returning one robots.txt body (or, with
// body "", an unavailable result) and recording every call.
type countingFetch struct {
	body  string
	mu    sync.Mutex
	calls []string
}

func (f *countingFetch) Fetch(_ context.Context, scheme, authority string) policy.Access {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, scheme+"://"+authority)
	if f.body == "" {
		return unavailableAccess("n", -1)
	}
	return policy.Access{Result: policy.Successful, Status: 200, MaxAge: -1, Robots: robots.Parse([]byte(f.body))}
}

func (f *countingFetch) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// newStubPolicy returns a Policy over a counting fetch; o's Identifier and
// Cache are filled in.
func newStubPolicy(body string, o policy.Options) (*policy.Policy, *countingFetch) {
	f := &countingFetch{body: body}
	if o.Identifier == nil {
		o.Identifier = identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	}
	o.Cache = access.NewCache(f.Fetch, access.CacheOptions{})
	return policy.New(o), f
}

func ruleLine(d policy.Decision) int {
	if d.Rule() == nil {
		return 0
	}
	return d.Rule().Line
}

// TestDecidePinned checks that a pinned token decides, whatever the
// User-Agent says, and that the decision's Identity tells where it came
// from.
func TestDecidePinned(t *testing.T) {
	pinner, err := identity.NewPinner(identity.PinOptions{
		Users:  []identity.User{{Name: "alice", PasswordHash: testkit.BcryptHash(t, "pw"), Token: "PinnedBot"}},
		Ranges: []identity.ClientRange{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "ExampleBot"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pinOf := func(header, client string) policy.Pin {
		var addr netip.Addr
		if client != "" {
			addr = netip.MustParseAddr(client)
		}
		pin, err := pinner.Pin(t.Context(), header, addr)
		if err != nil {
			t.Fatalf("Pin(%q, %s): %v", header, client, err)
		}
		return pin
	}
	credPin := pinOf(testkit.BasicAuth("alice", "pw"), "")
	rangePin := pinOf("", "10.1.2.3")
	overrides := []identity.Override{{Pattern: regexp.MustCompile("^Overridden"), Token: "ExampleBot"}}

	tests := []struct {
		name string
		pin  policy.Pin
		ua   string
		path string

		wantAllowed bool
		wantReason  policy.Reason
		wantLine    int
		wantToken   string
		wantSource  policy.IdentitySource
		wantUser    string
	}{
		{name: "pinned token's own rule", pin: credPin, ua: "", path: "/pinned-only/x",
			wantReason: auditlog.ReasonRule, wantLine: 2, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "pinned token, UA names another crawler with a group", pin: credPin, ua: uaExampleBot, path: "/pinned-ok",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "pinned token, UA's rule does not apply", pin: credPin, ua: uaExampleBot, path: "/private",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "pinned token, UA of a crawler without that rule does not lift it", pin: credPin, ua: "ExampleBot/1.0", path: "/pinned-only",
			wantReason: auditlog.ReasonRule, wantLine: 2, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "pinned token, browser UA does not fall back to star", pin: credPin, ua: uaChromeWindows, path: "/public",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "pin wins over an override", pin: credPin, ua: "Overridden/1", path: "/private",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch, wantToken: "PinnedBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "range pin", pin: rangePin, ua: "PinnedBot/1.0", path: "/pinned-ok",
			wantReason: auditlog.ReasonRule, wantLine: 6, wantToken: "ExampleBot", wantSource: policy.SourceClientRange},
		{name: "range pin, spoofed UA", pin: rangePin, ua: "PinnedBot/1.0", path: "/pinned-only",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch, wantToken: "ExampleBot", wantSource: policy.SourceClientRange},
		{name: "zero pin: the UA decides", pin: policy.Pin{}, ua: "PinnedBot/1.0", path: "/pinned-only",
			wantReason: auditlog.ReasonRule, wantLine: 2, wantToken: "PinnedBot", wantSource: policy.SourceUserAgent},
		{name: "zero pin: an override decides", pin: policy.Pin{}, ua: "Overridden/1", path: "/private",
			wantReason: auditlog.ReasonRule, wantLine: 5, wantToken: "ExampleBot", wantSource: policy.SourceOverride},
		{name: "zero pin, no UA: star", pin: policy.Pin{}, ua: "", path: "/pinned-ok",
			wantReason: auditlog.ReasonRule, wantLine: 9, wantToken: "*", wantSource: policy.SourceDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := newStubPolicy(pinRobots, policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), overrides), Pinner: pinner})
			req := policy.Request{Scheme: "https", Host: "example.com", Path: tt.path, UserAgent: tt.ua, Pin: tt.pin}
			d := p.Decide(context.Background(), req)
			if d.Allowed != tt.wantAllowed || d.Reason != tt.wantReason || ruleLine(d) != tt.wantLine {
				t.Errorf("Decide(%+v): got Allowed %v Reason %q line %d (Err %v), want %v %q line %d",
					req, d.Allowed, d.Reason, ruleLine(d), d.Err, tt.wantAllowed, tt.wantReason, tt.wantLine)
			}
			id := d.Identity
			if id.Token != tt.wantToken || id.Source != tt.wantSource || id.User != tt.wantUser {
				t.Errorf("Decide(%+v): got Identity %+v, want Token %q Source %q User %q", req, id, tt.wantToken, tt.wantSource, tt.wantUser)
			}
			if tt.pin.Token != "" && !slices.Equal(id.Candidates, []string{tt.pin.Token}) {
				t.Errorf("Decide(%+v): got Candidates %q, want only the pinned token %q", req, id.Candidates, tt.pin.Token)
			}
			if calls := f.Calls(); len(calls) != 1 || calls[0] != "https://example.com:443" {
				t.Errorf("Decide(%+v): got fetches %q, want one of https://example.com:443", req, calls)
			}
		})
	}
}

// TestDecideHostLists checks AllowHosts and DenyHosts: forms, case, IDNA,
// IP literals, ports, precedence, and that a denied request never fetches
// robots.txt.
func TestDecideHostLists(t *testing.T) {
	tests := []struct {
		name         string
		allow, deny  []string
		exempt       []string
		scheme, host string // scheme "" means http
		path         string // "" means /x
		wantDenied   bool
		wantReason   policy.Reason // when not denied; "" means unavailable
	}{
		{name: "no lists", host: "example.com"},

		// Allow only.
		{name: "allow exact: host", allow: []string{"example.com"}, host: "example.com"},
		{name: "allow exact: subdomain", allow: []string{"example.com"}, host: "www.example.com", wantDenied: true},
		{name: "allow exact: other host", allow: []string{"example.com"}, host: "example.org", wantDenied: true},
		{name: "allow exact: suffix lookalike", allow: []string{"example.com"}, host: "badexample.com", wantDenied: true},
		{name: "allow dot: itself", allow: []string{".example.com"}, host: "example.com"},
		{name: "allow dot: subdomain", allow: []string{".example.com"}, host: "www.example.com"},
		{name: "allow dot: deep subdomain", allow: []string{".example.com"}, host: "a.b.c.example.com"},
		{name: "allow dot: suffix lookalike", allow: []string{".example.com"}, host: "badexample.com", wantDenied: true},
		{name: "allow dot: parent", allow: []string{".www.example.com"}, host: "example.com", wantDenied: true},
		{name: "allow several", allow: []string{"a.test", ".example.com", "b.test"}, host: "b.test"},
		{name: "allow several: none matches", allow: []string{"a.test", ".example.com", "b.test"}, host: "c.test", wantDenied: true},
		{name: "allow: port ignored", allow: []string{"example.com"}, host: "example.com:8080"},
		{name: "allow: https port ignored", allow: []string{"example.com"}, scheme: "https", host: "example.com:8443"},
		{name: "allow: case of host", allow: []string{"example.com"}, host: "EXAMPLE.Com"},
		{name: "allow: case of entry", allow: []string{"WWW.Example.COM"}, host: "www.example.com"},
		{name: "allow: robots.txt of another host is denied too", allow: []string{"example.com"}, host: "example.org", path: "/robots.txt", wantDenied: true},

		// Deny only.
		{name: "deny exact: host", deny: []string{"example.com"}, host: "example.com", wantDenied: true},
		{name: "deny exact: subdomain", deny: []string{"example.com"}, host: "www.example.com"},
		{name: "deny exact: other", deny: []string{"example.com"}, host: "example.org"},
		{name: "deny exact: port and case", deny: []string{"example.com"}, host: "Example.COM:8080", wantDenied: true},
		{name: "deny dot: itself", deny: []string{".example.com"}, host: "example.com", wantDenied: true},
		{name: "deny dot: subdomain", deny: []string{".example.com"}, host: "a.b.example.com:81", wantDenied: true},
		{name: "deny dot: suffix lookalike", deny: []string{".example.com"}, host: "badexample.com"},
		{name: "deny: robots.txt is denied too", deny: []string{"example.com"}, host: "example.com", path: "/robots.txt", wantDenied: true},
		{name: "deny: another host's robots.txt", deny: []string{"example.com"}, host: "example.org", path: "/robots.txt", wantReason: auditlog.ReasonImplicit},

		// Both.
		{name: "deny wins over allow: same entry", allow: []string{"example.com"}, deny: []string{"example.com"}, host: "example.com", wantDenied: true},
		{name: "deny wins over allow: subdomain", allow: []string{".example.com"}, deny: []string{"secret.example.com"}, host: "secret.example.com", wantDenied: true},
		{name: "deny wins over allow: deeper subdomain", allow: []string{".example.com"}, deny: []string{".secret.example.com"}, host: "x.secret.example.com", wantDenied: true},
		{name: "allowed sibling of a denied host", allow: []string{".example.com"}, deny: []string{"secret.example.com"}, host: "www.example.com"},
		{name: "deny wins over exempt", deny: []string{"example.com"}, exempt: []string{"example.com"}, host: "example.com", wantDenied: true},
		{name: "not on the allow list wins over exempt", allow: []string{"other.test"}, exempt: []string{"example.com"}, host: "example.com", wantDenied: true},
		{name: "allowed and exempt", allow: []string{".example.com"}, exempt: []string{"www.example.com"}, host: "www.example.com", wantReason: auditlog.ReasonOverride},

		// IDNA.
		{name: "IDNA: U-label entry, A-label host", deny: []string{"bücher.example"}, host: "xn--bcher-kva.example", wantDenied: true},
		{name: "IDNA: A-label entry, U-label host", deny: []string{"xn--bcher-kva.example"}, host: "bücher.example", wantDenied: true},
		{name: "IDNA: upper-case U-label host", deny: []string{"bücher.example"}, host: "BÜCHER.example", wantDenied: true},
		{name: "IDNA: upper-case U-label entry", deny: []string{"BÜCHER.EXAMPLE"}, host: "bücher.example:8080", wantDenied: true},
		{name: "IDNA: dot form", deny: []string{".bücher.example"}, host: "www.bücher.example", wantDenied: true},
		{name: "IDNA: dot form lookalike", deny: []string{".bücher.example"}, host: "xbücher.example"},
		{name: "IDNA: allow U-label", allow: []string{"bücher.example"}, host: "xn--bcher-kva.example"},
		{name: "IDNA: different name", allow: []string{"bücher.example"}, host: "bucher.example", wantDenied: true},

		// IP literals.
		{name: "IPv4 deny", deny: []string{"192.0.2.1"}, host: "192.0.2.1:8080", wantDenied: true},
		{name: "IPv4 other", deny: []string{"192.0.2.1"}, host: "192.0.2.10"},
		{name: "IPv4 allow", allow: []string{"192.0.2.1"}, host: "192.0.2.1"},
		{name: "IPv6 deny, bare entry, bracketed host with port", deny: []string{"2001:db8::1"}, host: "[2001:db8::1]:8080", wantDenied: true},
		{name: "IPv6 deny, bracketed entry, bracketed host", deny: []string{"[2001:db8::1]"}, host: "[2001:db8::1]", wantDenied: true},
		{name: "IPv6 deny, upper-case entry", deny: []string{"[2001:DB8::1]"}, host: "[2001:db8::1]", wantDenied: true},
		{name: "IPv6 deny, upper-case host", deny: []string{"2001:db8::1"}, host: "[2001:DB8::1]:80", wantDenied: true},
		{name: "IPv6 other", deny: []string{"2001:db8::1"}, host: "[2001:db8::2]"},
		{name: "IPv6 deny, host with zeros spelt out", deny: []string{"2001:db8::1"}, host: "[2001:0db8:0:0::1]", wantDenied: true},
		{name: "IPv6 deny, entry with zeros spelt out", deny: []string{"2001:db8:0:0:0:0:0:1"}, host: "[2001:db8::1]", wantDenied: true},
		{name: "IPv4 deny, IPv4-mapped IPv6 host", deny: []string{"192.0.2.1"}, host: "[::ffff:192.0.2.1]:8080", wantDenied: true},
		{name: "IPv4-mapped IPv6 entry, IPv4 host", deny: []string{"::ffff:192.0.2.1"}, host: "192.0.2.1", wantDenied: true},
		{name: "IPv4 allow, IPv4-mapped IPv6 host", allow: []string{"192.0.2.1"}, host: "[::ffff:192.0.2.1]"},
		{name: "IPv6 allow", allow: []string{"::1"}, host: "[::1]:8080"},

		// Fully qualified names with a trailing dot are the same host.
		{name: "trailing dot: deny exact", deny: []string{"example.com"}, host: "example.com.", wantDenied: true},
		{name: "trailing dot: deny exact with port and case", deny: []string{"example.com"}, host: "EXAMPLE.com.:8080", wantDenied: true},
		{name: "trailing dot: deny subdomain form", deny: []string{".example.com"}, host: "www.example.com.", wantDenied: true},
		{name: "trailing dot: entry", deny: []string{"example.com."}, host: "example.com", wantDenied: true},
		{name: "trailing dot: dot-form entry", deny: []string{".example.com."}, host: "a.example.com", wantDenied: true},
		{name: "trailing dot: allow", allow: []string{"example.com"}, host: "example.com."},
		{name: "trailing dot: exempt", exempt: []string{"example.com"}, host: "example.com.", wantReason: auditlog.ReasonOverride},
		{name: "trailing dot: lookalike still apart", deny: []string{".example.com"}, host: "badexample.com."},
		{name: "IPv6 not allowed", allow: []string{"::1"}, host: "[::2]", wantDenied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allow, deny, exempt := slices.Clone(tt.allow), slices.Clone(tt.deny), slices.Clone(tt.exempt)
			p, f := newStubPolicy("", policy.Options{AllowHosts: allow, DenyHosts: deny, ExemptHosts: exempt})
			scheme, path := tt.scheme, tt.path
			if scheme == "" {
				scheme = "http"
			}
			if path == "" {
				path = "/x"
			}
			req := policy.Request{Scheme: scheme, Host: tt.host, Path: path, UserAgent: uaExampleBot}
			d := p.Decide(context.Background(), req)
			calls := f.Calls()
			if tt.wantDenied {
				if d.Allowed || d.Reason != auditlog.ReasonHostDenied || d.Err == nil {
					t.Errorf("allow %q deny %q: Decide(%+v): got Allowed %v Reason %q Err %v, want denied with %q and an error",
						tt.allow, tt.deny, req, d.Allowed, d.Reason, d.Err, auditlog.ReasonHostDenied)
				}
				if len(calls) != 0 {
					t.Errorf("allow %q deny %q: Decide(%+v): got robots.txt fetches %q, want none", tt.allow, tt.deny, req, calls)
				}
				if d.RobotsURL == "" || d.Identity.Token != "ExampleBot" {
					t.Errorf("Decide(%+v): got RobotsURL %q Identity %+v, want both set", req, d.RobotsURL, d.Identity)
				}
			} else {
				want := tt.wantReason
				if want == "" {
					want = auditlog.ReasonUnavailable
				}
				if !d.Allowed || d.Reason != want {
					t.Errorf("allow %q deny %q: Decide(%+v): got Allowed %v Reason %q (Err %v), want allowed with %q",
						tt.allow, tt.deny, req, d.Allowed, d.Reason, d.Err, want)
				}
				if wantFetch := want == auditlog.ReasonUnavailable; wantFetch != (len(calls) == 1) {
					t.Errorf("Decide(%+v): got robots.txt fetches %q, want %v", req, calls, wantFetch)
				}
			}
			if !slices.Equal(allow, tt.allow) || !slices.Equal(deny, tt.deny) || !slices.Equal(exempt, tt.exempt) {
				t.Errorf("New changed the caller's lists: got %q %q %q, want %q %q %q", allow, deny, exempt, tt.allow, tt.deny, tt.exempt)
			}
		})
	}
}

// TestNewKeepsNoReference checks that changing the option slices after New
// changes no decision.
func TestNewKeepsNoReference(t *testing.T) {
	allow, deny, ports := []string{".example.com"}, []string{"secret.example.com"}, []int{443}
	p, _ := newStubPolicy("", policy.Options{AllowHosts: allow, DenyHosts: deny, ConnectPorts: ports})
	allow[0], deny[0], ports[0] = "other.test", "www.example.com", 8443
	ctx := context.Background()
	if d := p.Decide(ctx, policy.Request{Scheme: "http", Host: "www.example.com", Path: "/"}); !d.Allowed {
		t.Errorf("www.example.com after changing the lists: got %q, want allowed", d.Reason)
	}
	if d := p.Decide(ctx, policy.Request{Scheme: "http", Host: "secret.example.com", Path: "/"}); d.Reason != auditlog.ReasonHostDenied {
		t.Errorf("secret.example.com after changing the lists: got %q, want %q", d.Reason, auditlog.ReasonHostDenied)
	}
	if d := p.DecideConnect(ctx, policy.Request{Host: "www.example.com:8443"}, true); d.Reason != auditlog.ReasonConnectPort {
		t.Errorf("CONNECT :8443 after changing the ports: got %q, want %q", d.Reason, auditlog.ReasonConnectPort)
	}
	if d := p.DecideConnect(ctx, policy.Request{Host: "www.example.com:443"}, true); d.Reason != auditlog.ReasonIntercept {
		t.Errorf("CONNECT :443 after changing the ports: got %q, want %q", d.Reason, auditlog.ReasonIntercept)
	}
}

// noUA is TestDecideConnect's ua for a CONNECT without a User-Agent.
const noUA = "(none)"

// requireIdentity are policy options with connect.require_identity on.
var requireIdentity = policy.Options{RequireConnectIdentity: true}

func TestDecideConnect(t *testing.T) {
	const allowAll = "User-agent: *\nAllow: /\n"
	const denyRoot = "User-agent: *\nDisallow: /\n"
	const denyExampleBot = "User-agent: ExampleBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
	tests := []struct {
		name      string
		body      string // robots.txt; "" means unavailable
		o         policy.Options
		host      string
		ua        string // "" means uaExampleBot; noUA sends none
		pin       policy.Pin
		intercept bool

		wantAllowed   bool
		wantReason    policy.Reason
		wantLine      int
		wantRobotsURL string
		wantFetches   []string
		wantToken     string // "" means ExampleBot
	}{
		{name: "default port 443", body: allowAll, host: "example.com:443",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		// No port is ambiguous (decided as 443, dialled as 80 by goproxy):
		// refused before any fetch, in every spelling.
		{name: "no port is a bad request", body: allowAll, host: "example.com", wantReason: auditlog.ReasonBadRequest},
		{name: "no port, IPv6 literal", body: allowAll, host: "[2001:db8::1]", wantReason: auditlog.ReasonBadRequest},
		{name: "no port, trailing dot", body: allowAll, host: "example.com.", wantReason: auditlog.ReasonBadRequest},
		{name: "empty port", body: allowAll, host: "example.com:", wantReason: auditlog.ReasonBadRequest},
		{name: "bare IPv6 with a port-like tail", body: allowAll, host: "2001:db8::1:443", wantReason: auditlog.ReasonBadRequest},
		{name: "default ports refuse 8443", body: allowAll, host: "example.com:8443",
			wantReason: auditlog.ReasonConnectPort, wantRobotsURL: "https://example.com:8443/robots.txt"},
		{name: "default ports refuse 80", body: allowAll, host: "example.com:80",
			wantReason: auditlog.ReasonConnectPort, wantRobotsURL: "http://example.com/robots.txt"},
		{name: "default ports refuse 22 even when intercepting", body: allowAll, host: "example.com:22", intercept: true,
			wantReason: auditlog.ReasonConnectPort, wantRobotsURL: "https://example.com:22/robots.txt"},
		{name: "custom ports allow 8443", body: allowAll, o: policy.Options{ConnectPorts: []int{443, 8443}}, host: "example.com:8443",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com:8443/robots.txt", wantFetches: []string{"https://example.com:8443"}},
		{name: "custom ports without 443 refuse 443", body: allowAll, o: policy.Options{ConnectPorts: []int{8443}}, host: "example.com:443",
			wantReason: auditlog.ReasonConnectPort, wantRobotsURL: "https://example.com/robots.txt"},
		{name: "port 80 uses the http robots.txt", body: allowAll, o: policy.Options{ConnectPorts: []int{80, 443}}, host: "Example.com:80",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "http://example.com/robots.txt", wantFetches: []string{"http://example.com:80"}},
		{name: "port 080 is port 80", body: allowAll, o: policy.Options{ConnectPorts: []int{80}}, host: "example.com:080",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "http://example.com/robots.txt", wantFetches: []string{"http://example.com:80"}},
		{name: "port 8080 is not port 80", body: allowAll, o: policy.Options{ConnectPorts: []int{8080}}, host: "example.com:8080",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com:8080/robots.txt", wantFetches: []string{"https://example.com:8080"}},
		{name: "port 80 denied by the http robots.txt", body: denyRoot, o: policy.Options{ConnectPorts: []int{80}}, host: "example.com:80",
			wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "http://example.com/robots.txt", wantFetches: []string{"http://example.com:80"}},
		{name: "IPv6 literal", body: allowAll, host: "[2001:DB8::1]:443",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://[2001:db8::1]/robots.txt", wantFetches: []string{"https://[2001:db8::1]:443"}},
		{name: "IDNA host", body: allowAll, host: "bücher.example:443",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://xn--bcher-kva.example/robots.txt", wantFetches: []string{"https://xn--bcher-kva.example:443"}},
		{name: "host-level deny by a rule on /", body: denyRoot, host: "example.com:443",
			wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "host-level deny for the UA's group only", body: denyExampleBot, host: "example.com:443",
			wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "host-level: another UA's group allows", body: denyExampleBot, host: "example.com:443", ua: "OtherBot/1.0",
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 5, wantToken: "OtherBot",
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "host-level: the pin decides, not the UA", body: denyExampleBot, host: "example.com:443", pin: mustRangePin(t, "OtherBot"),
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 5, wantToken: "OtherBot",
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "host-level: unavailable robots.txt allows", body: "", host: "example.com:443",
			wantAllowed: true, wantReason: auditlog.ReasonUnavailable,
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "host-level: exempt host", body: denyRoot, o: policy.Options{ExemptHosts: []string{"example.com"}}, host: "example.com:443",
			wantAllowed: true, wantReason: auditlog.ReasonOverride, wantRobotsURL: "https://example.com/robots.txt"},
		{name: "intercept: allowed without a fetch", body: denyRoot, host: "example.com:443", intercept: true,
			wantAllowed: true, wantReason: auditlog.ReasonIntercept, wantRobotsURL: "https://example.com/robots.txt"},
		{name: "intercept on a custom port", body: denyRoot, o: policy.Options{ConnectPorts: []int{8443}}, host: "example.com:8443", intercept: true,
			wantAllowed: true, wantReason: auditlog.ReasonIntercept, wantRobotsURL: "https://example.com:8443/robots.txt"},
		{name: "intercept keeps the identity", body: denyRoot, host: "example.com:443", intercept: true, pin: mustRangePin(t, "OtherBot"),
			wantAllowed: true, wantReason: auditlog.ReasonIntercept, wantToken: "OtherBot", wantRobotsURL: "https://example.com/robots.txt"},
		{name: "refused", body: allowAll, o: policy.Options{RefuseConnect: true}, host: "example.com:443",
			wantReason: auditlog.ReasonConnectRefused},
		{name: "refused even when intercepting", body: allowAll, o: policy.Options{RefuseConnect: true}, host: "example.com:443", intercept: true,
			wantReason: auditlog.ReasonConnectRefused},
		{name: "refused before a bad authority", body: allowAll, o: policy.Options{RefuseConnect: true}, host: "exa mple.com:443",
			wantReason: auditlog.ReasonConnectRefused},
		{name: "refused even when exempt", body: allowAll, o: policy.Options{RefuseConnect: true, ExemptHosts: []string{"example.com"}}, host: "example.com:443",
			wantReason: auditlog.ReasonConnectRefused},
		{name: "deny list", body: allowAll, o: policy.Options{DenyHosts: []string{".example.com"}}, host: "www.example.com:443",
			wantReason: auditlog.ReasonHostDenied, wantRobotsURL: "https://www.example.com/robots.txt"},
		{name: "deny list when intercepting", body: allowAll, o: policy.Options{DenyHosts: []string{".example.com"}}, host: "www.example.com:443", intercept: true,
			wantReason: auditlog.ReasonHostDenied, wantRobotsURL: "https://www.example.com/robots.txt"},
		{name: "allow list when intercepting", body: allowAll, o: policy.Options{AllowHosts: []string{"other.test"}}, host: "example.com:443", intercept: true,
			wantReason: auditlog.ReasonHostDenied, wantRobotsURL: "https://example.com/robots.txt"},
		{name: "on the allow list", body: allowAll, o: policy.Options{AllowHosts: []string{"example.com"}}, host: "EXAMPLE.COM:443", intercept: true,
			wantAllowed: true, wantReason: auditlog.ReasonIntercept, wantRobotsURL: "https://example.com/robots.txt"},
		{name: "port checked before the host lists", body: allowAll, o: policy.Options{DenyHosts: []string{"example.com"}}, host: "example.com:8443",
			wantReason: auditlog.ReasonConnectPort, wantRobotsURL: "https://example.com:8443/robots.txt"},
		// connect.require_identity: a tunnel that names no crawler is
		// refused before any fetch when it would be decided under "*".
		{name: "no identity: decided under * by default", body: denyExampleBot, host: "example.com:443", ua: noUA,
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 5, wantToken: "*",
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "require identity: no User-Agent", body: allowAll, o: requireIdentity, host: "example.com:443", ua: noUA,
			wantReason: auditlog.ReasonUnidentifiedTunnel, wantToken: "*", wantRobotsURL: "https://example.com/robots.txt"},
		{name: "require identity: browser tokens only", body: allowAll, o: requireIdentity, host: "example.com:443", ua: "Mozilla/5.0 (X11; Linux x86_64)",
			wantReason: auditlog.ReasonUnidentifiedTunnel, wantToken: "*", wantRobotsURL: "https://example.com/robots.txt"},
		{name: "require identity: a product token is decided as before", body: denyExampleBot, o: requireIdentity, host: "example.com:443",
			wantReason: auditlog.ReasonRule, wantLine: 2,
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "require identity: a pin is an identity", body: denyExampleBot, o: requireIdentity, host: "example.com:443", ua: noUA, pin: mustRangePin(t, "OtherBot"),
			wantAllowed: true, wantReason: auditlog.ReasonRule, wantLine: 5, wantToken: "OtherBot",
			wantRobotsURL: "https://example.com/robots.txt", wantFetches: []string{"https://example.com:443"}},
		{name: "require identity: intercepted tunnels decide each request", body: allowAll, o: requireIdentity, host: "example.com:443", ua: noUA, intercept: true,
			wantAllowed: true, wantReason: auditlog.ReasonIntercept, wantToken: "*", wantRobotsURL: "https://example.com/robots.txt"},
		{name: "require identity: the port is checked first", body: allowAll, o: requireIdentity, host: "example.com:8443", ua: noUA,
			wantReason: auditlog.ReasonConnectPort, wantToken: "*", wantRobotsURL: "https://example.com:8443/robots.txt"},
		{name: "require identity: an exempt host needs none", body: denyRoot, o: policy.Options{RequireConnectIdentity: true, ExemptHosts: []string{"example.com"}},
			host: "example.com:443", ua: noUA, wantAllowed: true, wantReason: auditlog.ReasonOverride, wantToken: "*", wantRobotsURL: "https://example.com/robots.txt"},
		{name: "bad authority: space", body: allowAll, host: "exa mple.com:443", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority: no host", body: allowAll, host: ":443", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority: empty", body: allowAll, host: "", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority: port 0", body: allowAll, host: "example.com:0", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority: port too large", body: allowAll, host: "example.com:65536", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority: non-numeric port", body: allowAll, host: "example.com:https", wantReason: auditlog.ReasonBadRequest},
		{name: "bad authority when intercepting", body: allowAll, host: "a/b:443", intercept: true, wantReason: auditlog.ReasonBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := newStubPolicy(tt.body, tt.o)
			ua := tt.ua
			switch ua {
			case "":
				ua = uaExampleBot
			case noUA:
				ua = ""
			}
			req := policy.Request{Host: tt.host, UserAgent: ua, Pin: tt.pin}
			d := p.DecideConnect(context.Background(), req, tt.intercept)
			if d.Allowed != tt.wantAllowed || d.Reason != tt.wantReason || ruleLine(d) != tt.wantLine {
				t.Errorf("DecideConnect(%+v, %v): got Allowed %v Reason %q line %d (Err %v), want %v %q line %d",
					req, tt.intercept, d.Allowed, d.Reason, ruleLine(d), d.Err, tt.wantAllowed, tt.wantReason, tt.wantLine)
			}
			if d.RobotsURL != tt.wantRobotsURL {
				t.Errorf("DecideConnect(%+v, %v): got RobotsURL %q, want %q", req, tt.intercept, d.RobotsURL, tt.wantRobotsURL)
			}
			if calls := f.Calls(); !slices.Equal(calls, tt.wantFetches) {
				t.Errorf("DecideConnect(%+v, %v): got robots.txt fetches %q, want %q", req, tt.intercept, calls, tt.wantFetches)
			}
			wantToken := tt.wantToken
			if wantToken == "" {
				wantToken = "ExampleBot"
			}
			if d.Identity.Token != wantToken {
				t.Errorf("DecideConnect(%+v, %v): got Identity %+v, want Token %q", req, tt.intercept, d.Identity, wantToken)
			}
			denied := !d.Allowed && d.Reason != auditlog.ReasonRule
			if denied != (d.Err != nil) {
				t.Errorf("DecideConnect(%+v, %v): got Err %v, want an error exactly for a denial other than by a rule", req, tt.intercept, d.Err)
			}
			if d.Reason == auditlog.ReasonUnidentifiedTunnel && !strings.Contains(d.Err.Error(), "require_identity") {
				t.Errorf("DecideConnect(%+v, %v): got Err %q, want it to name connect.require_identity", req, tt.intercept, d.Err)
			}
			if d.Reason == auditlog.ReasonConnectPort && !strings.Contains(d.Err.Error(), "port") {
				t.Errorf("DecideConnect(%+v, %v): got Err %q, want it to name the port", req, tt.intercept, d.Err)
			}
		})
	}
}

// mustRangePin returns the pin of a client in a range pinned to token.
func mustRangePin(t *testing.T, token string) policy.Pin {
	t.Helper()
	p, err := identity.NewPinner(identity.PinOptions{Ranges: []identity.ClientRange{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: token}}})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := p.Pin(t.Context(), "", netip.MustParseAddr("10.0.0.1"))
	if err != nil || pin.Token != token {
		t.Fatalf("range pin: got %+v, %v", pin, err)
	}
	return pin
}

func TestAuthenticate(t *testing.T) {
	pinner, err := identity.NewPinner(identity.PinOptions{
		Users:    []identity.User{{Name: "alice", PasswordHash: testkit.BcryptHash(t, "pw"), Token: "AliceBot"}},
		Ranges:   []identity.ClientRange{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "RangeBot"}},
		Required: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	optional, err := identity.NewPinner(identity.PinOptions{Users: []identity.User{{Name: "alice", PasswordHash: testkit.BcryptHash(t, "pw"), Token: "AliceBot"}}})
	if err != nil {
		t.Fatal(err)
	}
	outside := netip.MustParseAddr("192.0.2.1")
	tests := []struct {
		name   string
		pinner *identity.Pinner
		header string
		client netip.Addr

		wantToken  string // of the pin; "" for none
		wantReason policy.Reason
		wantUser   string // of the denial's identity
	}{
		{name: "credentials", pinner: pinner, header: testkit.BasicAuth("alice", "pw"), client: outside, wantToken: "AliceBot"},
		{name: "range", pinner: pinner, client: netip.MustParseAddr("10.9.8.7"), wantToken: "RangeBot"},
		{name: "nothing, required", pinner: pinner, client: outside, wantReason: auditlog.ReasonAuthRequired},
		{name: "nothing, no address, required", pinner: pinner, wantReason: auditlog.ReasonAuthRequired},
		{name: "wrong password", pinner: pinner, header: testkit.BasicAuth("alice", "nope"), client: outside, wantReason: auditlog.ReasonAuthFailed, wantUser: "alice"},
		{name: "wrong password inside the range", pinner: pinner, header: testkit.BasicAuth("alice", "nope"), client: netip.MustParseAddr("10.0.0.1"), wantReason: auditlog.ReasonAuthFailed, wantUser: "alice"},
		{name: "unknown user", pinner: pinner, header: testkit.BasicAuth("eve", "pw"), client: outside, wantReason: auditlog.ReasonAuthFailed, wantUser: "eve"},
		{name: "not Basic", pinner: pinner, header: "Negotiate abc", client: outside, wantReason: auditlog.ReasonAuthFailed},
		{name: "nothing, optional", pinner: optional, client: outside},
		{name: "wrong password, optional", pinner: optional, header: testkit.BasicAuth("alice", "nope"), client: outside, wantReason: auditlog.ReasonAuthFailed, wantUser: "alice"},
		{name: "no Pinner", pinner: nil, header: testkit.BasicAuth("alice", "nope"), client: outside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := newStubPolicy("", policy.Options{Pinner: tt.pinner})
			pin, d := p.Authenticate(t.Context(), tt.header, tt.client)
			if len(f.Calls()) != 0 {
				t.Errorf("Authenticate fetched robots.txt: %q", f.Calls())
			}
			if pin.Token != tt.wantToken {
				t.Errorf("Authenticate(%q, %v): got pin %+v, want Token %q", tt.header, tt.client, pin, tt.wantToken)
			}
			if tt.wantReason == "" {
				if d != nil {
					t.Errorf("Authenticate(%q, %v): got denial %+v, want nil", tt.header, tt.client, d)
				}
				return
			}
			if d == nil {
				t.Fatalf("Authenticate(%q, %v): got no denial, want reason %q", tt.header, tt.client, tt.wantReason)
			}
			if d.Allowed || d.Reason != tt.wantReason || !d.NeedsAuth() || d.Err == nil {
				t.Errorf("Authenticate(%q, %v): got Allowed %v Reason %q NeedsAuth %v Err %v, want denied with %q, NeedsAuth and an error",
					tt.header, tt.client, d.Allowed, d.Reason, d.NeedsAuth(), d.Err, tt.wantReason)
			}
			if d.Identity.Token != "*" || d.Identity.Source != policy.SourceDefault || d.Identity.User != tt.wantUser {
				t.Errorf("Authenticate(%q, %v): got denial Identity %+v, want Token * Source %q User %q", tt.header, tt.client, d.Identity, policy.SourceDefault, tt.wantUser)
			}
			if d.Err != nil && strings.Contains(d.Err.Error(), "nope") {
				t.Errorf("Authenticate(%q, %v): got Err %q, which holds the password tried", tt.header, tt.client, d.Err)
			}
		})
	}
}

func TestNeedsAuth(t *testing.T) {
	for _, r := range []policy.Reason{
		auditlog.ReasonRule, auditlog.ReasonNoMatch, auditlog.ReasonUnavailable, auditlog.ReasonUnreachable,
		auditlog.ReasonImplicit, auditlog.ReasonOverride, auditlog.ReasonDestination, auditlog.ReasonBadRequest,
		auditlog.ReasonHostDenied, auditlog.ReasonConnectRefused, auditlog.ReasonConnectPort, auditlog.ReasonIntercept,
		auditlog.ReasonAuthRequired, auditlog.ReasonAuthFailed, "",
	} {
		want := r == auditlog.ReasonAuthRequired || r == auditlog.ReasonAuthFailed
		d := policy.Decision{Reason: r}
		if got := d.NeedsAuth(); got != want {
			t.Errorf("Decision{Reason: %q}.NeedsAuth(): got %v, want %v", r, got, want)
		}
	}
	if auditlog.ReasonAuthRequired != "proxy-auth-required" || auditlog.ReasonAuthFailed != "proxy-auth-failed" ||
		auditlog.ReasonHostDenied != "host-denied" || auditlog.ReasonConnectRefused != "connect-refused" ||
		auditlog.ReasonConnectPort != "connect-port" || auditlog.ReasonIntercept != "intercept" ||
		auditlog.ReasonUnidentifiedTunnel != "unidentified-tunnel" {
		t.Errorf("reason strings changed; they are part of the audit log and metrics labels")
	}
}
