package policy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestPolicyAuthorityRemembersAuthority: Policy.Authority answers as the
// package's Authority, the first time and from its memo.
func TestPolicyAuthorityRemembersAuthority(t *testing.T) {
	p := policy.New(policy.Options{Identifier: identity.NewIdentifier(nil, nil), Cache: access.NewCache(nil, access.CacheOptions{})})
	for _, in := range [][2]string{
		{"http", "Example.COM"}, {"HTTP", "example.com"}, {"https", "example.com:80"}, {"http", "example.com:"},
		{"http", "[::1]"}, {"http", "[2001:DB8::1]"}, {"http", "bücher.example"}, {"http", "example.com:080"},
		{"http", "example.com:abc"}, {"ftp", "example.com"}, {"http", ""}, {"http", "exa mple.com"},
	} {
		wantScheme, wantAuth, wantErr := policy.Authority(in[0], in[1])
		for _, round := range []string{"first", "remembered"} {
			scheme, auth, err := p.Authority(in[0], in[1])
			if scheme != wantScheme || auth != wantAuth || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s: Authority(%q, %q): got %q %q %v, want %q %q %v", round, in[0], in[1],
					scheme, auth, err, wantScheme, wantAuth, wantErr)
			}
		}
	}
}

// TestPolicyTargetsBounded: the memo keeps at most targetsMax Host values,
// and none longer than targetHostMax.
func TestPolicyTargetsBounded(t *testing.T) {
	p := policy.New(policy.Options{Identifier: identity.NewIdentifier(nil, nil), Cache: access.NewCache(nil, access.CacheOptions{})})
	for i := range policy.TargetsMax + 100 {
		p.Target("http", fmt.Sprintf("host-%d.example", i))
		if n := p.TargetsLen(); n > policy.TargetsMax {
			t.Fatalf("after %d hosts: got %d remembered, want at most %d", i+1, n, policy.TargetsMax)
		}
	}
	long := strings.Repeat("a", policy.TargetHostMax) + ".example"
	if _, auth, err := p.Authority("http", long); err != nil || auth != long+":80" {
		t.Errorf("Authority of a %d-octet host: got %q, %v", len(long), auth, err)
	}
	if p.Remembers("http", long) {
		t.Errorf("a %d-octet host was remembered, want none over %d octets", len(long), policy.TargetHostMax)
	}
}

// TestDecideAllocatesNothing: deciding a request to a known host on a warm
// cache allocates nothing, with and without host lists (the canonical
// authority, robots.txt URL, cache key and host-list verdicts are
// remembered), and a host on the deny list is refused with the same error.
func TestDecideAllocatesNothing(t *testing.T) {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("User-agent: ExampleBot\nDisallow: /private\n"))
	}))
	defer o.Close()
	host := strings.TrimPrefix(o.URL, "http://")
	f := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	cache := access.NewCache(f.Fetch, access.CacheOptions{})
	for _, tt := range []struct {
		name         string
		opts         policy.Options
		wantAllowed  bool
		wantReason   policy.Reason
		wantErrorIs  error
		wantErrorMsg string
	}{
		{"no host lists", policy.Options{}, true, auditlog.ReasonNoMatch, nil, ""},
		{"host lists", policy.Options{ExemptHosts: []string{"exempt.example"}, DenyHosts: []string{"denied.example", "::1"},
			AllowHosts: []string{"127.0.0.1", "example.org"}}, true, auditlog.ReasonNoMatch, nil, ""},
		{"exempt", policy.Options{ExemptHosts: []string{"127.0.0.1"}}, true, auditlog.ReasonOverride, nil, ""},
		{"denied", policy.Options{DenyHosts: []string{"127.0.0.1"}}, false, auditlog.ReasonHostDenied, policy.ErrHostDenied,
			"127.0.0.1: host is not allowed by the destination policy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Identifier, tt.opts.Cache = identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), cache
			p := policy.New(tt.opts)
			r := policy.Request{Scheme: "http", Host: host, Path: "/page.html", UserAgent: "ExampleBot/1.0"}
			d := p.Decide(context.Background(), r)
			if d.Allowed != tt.wantAllowed || d.Reason != tt.wantReason || !errors.Is(d.Err, tt.wantErrorIs) ||
				tt.wantErrorMsg != "" && d.Err.Error() != tt.wantErrorMsg {
				t.Fatalf("Decide: got allowed %v, reason %q, error %v; want %v, %q, %q", d.Allowed, d.Reason, d.Err,
					tt.wantAllowed, tt.wantReason, tt.wantErrorMsg)
			}
			if allocs := testing.AllocsPerRun(100, func() { p.Decide(context.Background(), r) }); allocs != 0 {
				t.Errorf("Decide on a warm cache: got %v allocations, want 0", allocs)
			}
		})
	}
}
