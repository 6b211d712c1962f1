package policy_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// exampleRobots disallows /private for ExampleBot and everything for the
// others. Line 2 and line 5 are its rules.
const exampleRobots = "User-agent: ExampleBot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		// The origin answers /robots.txt with status and body.
		status int
		body   string
		guard  *netguard.Guard // nil allows loopback
		exempt []string
		scheme string // "" means http
		ua     string
		path   string

		wantAllowed  bool
		wantReason   policy.Reason
		wantLine     int // line of the deciding rule; 0 means none
		wantFallback bool
		wantAccess   policy.AccessResult
		wantStatus   int
		wantCache    policy.CacheState
		wantFetches  int64
	}{
		{
			name: "ExampleBot disallowed path", status: 200, body: exampleRobots, ua: uaExampleBot, path: "/private/x",
			wantAllowed: false, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "ExampleBot other path", status: 200, body: exampleRobots, ua: uaExampleBot, path: "/public",
			wantAllowed: true, wantReason: auditlog.ReasonNoMatch,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "ExampleBot percent-encoded disallowed path", status: 200, body: exampleRobots, ua: uaExampleBot, path: "/%70rivate?q=1",
			wantAllowed: false, wantReason: auditlog.ReasonRule, wantLine: 2,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "no User-Agent gets the star group", status: 200, body: exampleRobots, ua: "", path: "/public",
			wantAllowed: false, wantReason: auditlog.ReasonRule, wantLine: 5, wantFallback: true,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "browser gets the star group", status: 200, body: exampleRobots, ua: uaChromeWindows, path: "/public",
			wantAllowed: false, wantReason: auditlog.ReasonRule, wantLine: 5, wantFallback: true,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "empty path is /", status: 200, body: exampleRobots, ua: "", path: "",
			wantAllowed: false, wantReason: auditlog.ReasonRule, wantLine: 5, wantFallback: true,
			wantAccess: policy.Successful, wantStatus: 200, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "robots.txt is implicitly allowed without a fetch", status: 200, body: exampleRobots, ua: "", path: "/robots.txt",
			wantAllowed: true, wantReason: auditlog.ReasonImplicit,
		},
		{
			name: "robots.txt with a query", status: 200, body: exampleRobots, ua: uaExampleBot, path: "/robots.txt?x=1",
			wantAllowed: true, wantReason: auditlog.ReasonImplicit,
		},
		{
			name: "percent-encoded robots.txt", status: 200, body: exampleRobots, ua: "", path: "/robots%2Etxt",
			wantAllowed: true, wantReason: auditlog.ReasonImplicit,
		},
		{
			name: "404 means unavailable: allowed", status: 404, body: exampleRobots, ua: "", path: "/private",
			wantAllowed: true, wantReason: auditlog.ReasonUnavailable,
			wantAccess: policy.Unavailable, wantStatus: 404, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "500 means unreachable: denied", status: 500, body: "User-agent: *\nAllow: /\n", ua: uaExampleBot, path: "/public",
			wantAllowed: false, wantReason: auditlog.ReasonUnreachable,
			wantAccess: policy.Unreachable, wantStatus: 500, wantCache: policy.CacheMiss, wantFetches: 1,
		},
		{
			name: "guard refusal: denied", status: 200, body: "User-agent: *\nAllow: /\n", guard: &netguard.Guard{}, ua: uaExampleBot, path: "/public",
			wantAllowed: false, wantReason: auditlog.ReasonDestination,
			wantAccess: policy.Unreachable, wantStatus: 0, wantCache: policy.CacheMiss, wantFetches: 0,
		},
		{
			name: "exempt host: allowed without a fetch", status: 200, body: exampleRobots, exempt: []string{"127.0.0.1"}, ua: "", path: "/private",
			wantAllowed: true, wantReason: auditlog.ReasonOverride,
		},
		{
			name: "scheme without robots.txt", status: 200, body: exampleRobots, scheme: "ftp", ua: uaExampleBot, path: "/public",
			wantAllowed: false, wantReason: auditlog.ReasonBadRequest,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testkit.NewOrigin(t, serve(tt.status, tt.body))
			p := accesstest.NewPolicy(tt.guard, tt.exempt)
			scheme := tt.scheme
			if scheme == "" {
				scheme = "http"
			}
			req := policy.Request{Scheme: scheme, Host: o.Listener.Addr().String(), Path: tt.path, UserAgent: tt.ua}
			d := p.Decide(context.Background(), req)

			line := 0
			if d.Rule() != nil {
				line = d.Rule().Line
			}
			if d.Allowed != tt.wantAllowed || d.Reason != tt.wantReason || line != tt.wantLine || d.Verdict.Fallback != tt.wantFallback {
				t.Errorf("Decide(%+v): got Allowed %v Reason %q rule line %d Fallback %v (Err %v), want Allowed %v Reason %q rule line %d Fallback %v",
					req, d.Allowed, d.Reason, line, d.Verdict.Fallback, d.Err, tt.wantAllowed, tt.wantReason, tt.wantLine, tt.wantFallback)
			}
			if d.Access != tt.wantAccess || d.Status != tt.wantStatus || d.Cache != tt.wantCache {
				t.Errorf("Decide(%+v): got Access %q Status %d Cache %q, want %q %d %q", req, d.Access, d.Status, d.Cache, tt.wantAccess, tt.wantStatus, tt.wantCache)
			}
			if got := o.Hits(); got != tt.wantFetches {
				t.Errorf("Decide(%+v): origin got %d requests, want %d", req, got, tt.wantFetches)
			}
			if tt.wantReason == auditlog.ReasonBadRequest {
				if d.Err == nil || d.RobotsURL != "" {
					t.Errorf("Decide(%+v): got Err %v RobotsURL %q, want an error and no URL", req, d.Err, d.RobotsURL)
				}
				return
			}
			if want := "http://" + o.Listener.Addr().String() + "/robots.txt"; d.RobotsURL != want {
				t.Errorf("Decide(%+v): got RobotsURL %q, want %q", req, d.RobotsURL, want)
			}
			if want := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil).Identify(tt.ua); d.Identity.Token != want.Token || !slices.Equal(d.Identity.Candidates, want.Candidates) {
				t.Errorf("Decide(%+v): got Identity %+v, want %+v", req, d.Identity, want)
			}
		})
	}
}

// TestDecideCaches checks that decisions share one fetch per authority,
// and that a caller's cancelled context does not fail the fetch.
func TestDecideCaches(t *testing.T) {
	o := testkit.NewOrigin(t, serve(200, exampleRobots))
	p := accesstest.NewPolicy(nil, nil)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	steps := []struct {
		ctx         context.Context
		path        string
		wantAllowed bool
		wantCache   policy.CacheState
	}{
		{cancelled, "/private/x", false, policy.CacheMiss},
		{context.Background(), "/public", true, policy.CacheHit},
		{context.Background(), "/private", false, policy.CacheHit},
	}
	for i, s := range steps {
		d := p.Decide(s.ctx, policy.Request{Scheme: "http", Host: o.Listener.Addr().String(), Path: s.path, UserAgent: uaExampleBot})
		if d.Allowed != s.wantAllowed || d.Cache != s.wantCache || d.Access != policy.Successful {
			t.Errorf("step %d: Decide(%s): got Allowed %v Cache %q Access %q (Err %v), want Allowed %v Cache %q Access %q",
				i, s.path, d.Allowed, d.Cache, d.Access, d.Err, s.wantAllowed, s.wantCache, policy.Successful)
		}
	}
	if got := o.Hits(); got != 1 {
		t.Errorf("got %d robots.txt fetches for %d decisions, want 1", got, len(steps))
	}
}

// TestDecideExemptHosts checks ExemptHosts matching without any network:
// requests that are not exempt get the fake fetcher's unavailable result.
func TestDecideExemptHosts(t *testing.T) {
	tests := []struct {
		exempt     []string
		host       string
		wantExempt bool
	}{
		{nil, "example.com", false},
		{[]string{"example.com"}, "example.com", true},
		{[]string{"example.com"}, "Example.COM:8080", true},
		{[]string{"example.com"}, "www.example.com", false},
		{[]string{"example.com"}, "example.org", false},
		{[]string{"EXAMPLE.com"}, "example.com", true},
		{[]string{".example.com"}, "example.com", true},
		{[]string{".example.com"}, "a.b.example.com", true},
		{[]string{".example.com"}, "badexample.com", false},
		{[]string{"other.test", ".example.com"}, "www.example.com:443", true},
		{[]string{"127.0.0.1"}, "127.0.0.1:8080", true},
		{[]string{"::1"}, "[::1]:8080", true},
		{[]string{"[::1]"}, "[::1]", true},
		{[]string{"bücher.example"}, "xn--bcher-kva.example", true},
		{[]string{"bücher.example"}, "BÜCHER.example", true},
		{[]string{"xn--bcher-kva.example"}, "bücher.example", true},
		{[]string{".bücher.example"}, "www.bücher.example", true},
		{[]string{".bücher.example"}, "xbücher.example", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.exempt, ",")+" "+tt.host, func(t *testing.T) {
			var fetches []string
			var mu sync.Mutex
			c := access.NewCache(func(_ context.Context, scheme, authority string) policy.Access {
				mu.Lock()
				defer mu.Unlock()
				fetches = append(fetches, scheme+"://"+authority)
				return unavailableAccess("n", -1)
			}, access.CacheOptions{})
			exempt := slices.Clone(tt.exempt)
			p := policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: c, ExemptHosts: exempt})
			d := p.Decide(context.Background(), policy.Request{Scheme: "http", Host: tt.host, Path: "/x"})
			want := policy.Reason(auditlog.ReasonUnavailable)
			if tt.wantExempt {
				want = auditlog.ReasonOverride
			}
			if !d.Allowed || d.Reason != want || tt.wantExempt != (len(fetches) == 0) {
				t.Errorf("ExemptHosts %q, host %q: got Allowed %v Reason %q after fetches %q, want Allowed true Reason %q", tt.exempt, tt.host, d.Allowed, d.Reason, fetches, want)
			}
			if !slices.Equal(exempt, tt.exempt) {
				t.Errorf("New changed the caller's ExemptHosts: got %q, want %q", exempt, tt.exempt)
			}
		})
	}
}

func TestAuthority(t *testing.T) {
	tests := []struct {
		scheme, host  string
		wantScheme    string
		wantAuthority string // "" means an error
	}{
		{"http", "Example.COM", "http", "example.com:80"},
		{"HTTP", "example.com", "http", "example.com:80"},
		{"https", "example.com", "https", "example.com:443"},
		{"http", "example.com:8080", "http", "example.com:8080"},
		{"https", "example.com:80", "https", "example.com:80"},
		{"http", "example.com:", "http", "example.com:80"},
		{"http", "[::1]:80", "http", "[::1]:80"},
		{"http", "[::1]", "http", "[::1]:80"},
		{"https", "[::1]:8443", "https", "[::1]:8443"},
		{"http", "[2001:DB8::1]", "http", "[2001:db8::1]:80"},
		{"http", "127.0.0.1:8080", "http", "127.0.0.1:8080"},
		{"http", "bücher.example", "http", "xn--bcher-kva.example:80"},
		{"https", "BÜCHER.example:8443", "https", "xn--bcher-kva.example:8443"},
		{"http", "xn--bcher-kva.example", "http", "xn--bcher-kva.example:80"},
		{"http", "a_b.example.com", "http", "a_b.example.com:80"},
		{"http", "example.com:080", "http", "example.com:80"},
		{"http", "example.com:abc", "", ""},
		{"http", "example.com:0", "", ""},
		{"http", "example.com:65536", "", ""},
		{"ftp", "example.com", "", ""},
		{"", "example.com", "", ""},
		{"ws", "example.com", "", ""},
		{"http", "", "", ""},
		{"http", ":80", "", ""},
		{"http", "[]:80", "", ""},
		{"http", "exa mple.com", "", ""},
		// One address, one spelling (RFC 5952; IPv4-mapped is IPv4).
		{"http", "[0:0:0:0:0:0:0:1]:80", "http", "[::1]:80"},
		{"http", "[::0:1]", "http", "[::1]:80"},
		{"http", "[0::1]:80", "http", "[::1]:80"},
		{"http", "[0000:0000::0001]:80", "http", "[::1]:80"},
		{"http", "[2001:DB8:0:0:0:0:0:1]:8080", "http", "[2001:db8::1]:8080"},
		{"http", "[::ffff:127.0.0.1]:80", "http", "127.0.0.1:80"},
		{"http", "[::ffff:7f00:1]:80", "http", "127.0.0.1:80"},
		{"http", "[0:0:0:0:0:FFFF:127.0.0.1]", "http", "127.0.0.1:80"},
		{"https", "[::FFFF:10.1.2.3]:8443", "https", "10.1.2.3:8443"},
		{"http", "[fe80::1%25eth0]:80", "", ""},
		{"http", "[fe80::1%eth0]:80", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.scheme+" "+tt.host, func(t *testing.T) {
			scheme, auth, err := policy.Authority(tt.scheme, tt.host)
			if tt.wantAuthority == "" {
				if err == nil {
					t.Errorf("Authority(%q, %q): got %q %q, want an error", tt.scheme, tt.host, scheme, auth)
				}
				return
			}
			if err != nil || scheme != tt.wantScheme || auth != tt.wantAuthority {
				t.Errorf("Authority(%q, %q): got %q %q %v, want %q %q", tt.scheme, tt.host, scheme, auth, err, tt.wantScheme, tt.wantAuthority)
			}
		})
	}
}

func TestRobotsURL(t *testing.T) {
	tests := []struct {
		scheme, authority, want string
	}{
		{"http", "example.com:80", "http://example.com/robots.txt"},
		{"https", "example.com:443", "https://example.com/robots.txt"},
		{"http", "example.com:8080", "http://example.com:8080/robots.txt"},
		{"http", "example.com:443", "http://example.com:443/robots.txt"},
		{"https", "example.com:80", "https://example.com:80/robots.txt"},
		{"http", "[::1]:80", "http://[::1]/robots.txt"},
		{"http", "[::1]:8080", "http://[::1]:8080/robots.txt"},
		{"http", "xn--bcher-kva.example:80", "http://xn--bcher-kva.example/robots.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.scheme+" "+tt.authority, func(t *testing.T) {
			if got := policy.RobotsURL(tt.scheme, tt.authority); got != tt.want {
				t.Errorf("RobotsURL(%q, %q): got %q, want %q", tt.scheme, tt.authority, got, tt.want)
			}
		})
	}
}

// TestDecideRobotsURL checks the robots.txt URL and the cache key Decide
// derives from a request's scheme and Host.
func TestDecideRobotsURL(t *testing.T) {
	tests := []struct {
		scheme, host  string
		wantURL       string
		wantFetchedAs string
	}{
		{"http", "Example.COM", "http://example.com/robots.txt", "http://example.com:80"},
		{"http", "example.com:80", "http://example.com/robots.txt", "http://example.com:80"},
		{"HTTPS", "example.com:443", "https://example.com/robots.txt", "https://example.com:443"},
		{"http", "example.com:8080", "http://example.com:8080/robots.txt", "http://example.com:8080"},
		{"http", "[::1]:80", "http://[::1]/robots.txt", "http://[::1]:80"},
		{"http", "bücher.example", "http://xn--bcher-kva.example/robots.txt", "http://xn--bcher-kva.example:80"},
	}
	for _, tt := range tests {
		t.Run(tt.scheme+" "+tt.host, func(t *testing.T) {
			var fetched string
			c := access.NewCache(func(_ context.Context, scheme, authority string) policy.Access {
				fetched = scheme + "://" + authority
				return unavailableAccess("n", -1)
			}, access.CacheOptions{})
			p := policy.New(policy.Options{Identifier: identity.NewIdentifier(nil, nil), Cache: c})
			d := p.Decide(context.Background(), policy.Request{Scheme: tt.scheme, Host: tt.host, Path: "/"})
			if d.RobotsURL != tt.wantURL || fetched != tt.wantFetchedAs {
				t.Errorf("Decide(%s, %s): got RobotsURL %q fetched as %q, want %q and %q", tt.scheme, tt.host, d.RobotsURL, fetched, tt.wantURL, tt.wantFetchedAs)
			}
		})
	}
}

// Compile-time check that Fetcher.Fetch is a FetchFunc.
var _ access.FetchFunc = (*access.Fetcher)(nil).Fetch
