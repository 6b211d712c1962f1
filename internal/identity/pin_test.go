package identity_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// testPinOptions has two users and nested IPv4 and IPv6 client ranges.
func testPinOptions(t testing.TB, required bool) identity.PinOptions {
	return identity.PinOptions{
		Users: []identity.User{
			{Name: "alice", PasswordHash: testkit.BcryptHash(t, "alice-pw"), Token: "AliceBot"},
			{Name: "bob", PasswordHash: testkit.BcryptHash(t, "bob:pw with colon"), Token: "BobBot"},
		},
		Ranges: []identity.ClientRange{
			{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "WideBot"},
			{Prefix: netip.MustParsePrefix("10.1.0.0/16"), Token: "NarrowBot"},
			{Prefix: netip.MustParsePrefix("2001:db8::/32"), Token: "SixBot"},
			{Prefix: netip.MustParsePrefix("2001:db8:1::/48"), Token: "SixNarrowBot"},
			{Prefix: netip.MustParsePrefix("fe80::/10"), Token: "LinkLocalBot"},
			// Not masked: NewPinner masks it to 192.168.7.0/24.
			{Prefix: netip.MustParsePrefix("192.168.7.99/24"), Token: "UnmaskedBot"},
		},
		Required: required,
	}
}

func newTestPinner(t testing.TB, required bool) *identity.Pinner {
	t.Helper()
	p, err := identity.NewPinner(testPinOptions(t, required))
	if err != nil {
		t.Fatalf("NewPinner: %v", err)
	}
	return p
}

func TestPin(t *testing.T) {
	var none netip.Addr
	outside := netip.MustParseAddr("203.0.113.5")
	tests := []struct {
		name     string
		required bool
		header   string
		client   netip.Addr

		wantToken  string
		wantSource policy.IdentitySource
		wantUser   string // also on ErrProxyAuthFailed
		wantErr    error  // nil, ErrProxyAuthRequired or ErrProxyAuthFailed
	}{
		// Credentials.
		{name: "correct credentials", header: testkit.BasicAuth("alice", "alice-pw"), client: outside,
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "correct credentials, no client address", header: testkit.BasicAuth("alice", "alice-pw"), client: none,
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "password containing a colon", header: testkit.BasicAuth("bob", "bob:pw with colon"), client: outside,
			wantToken: "BobBot", wantSource: policy.SourceCredentials, wantUser: "bob"},
		{name: "lower-case scheme", header: "basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-pw")), client: outside,
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "upper-case scheme", header: "BASIC " + base64.StdEncoding.EncodeToString([]byte("alice:alice-pw")), client: outside,
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "surrounding white space", header: "  " + testkit.BasicAuth("alice", "alice-pw") + " ", client: outside,
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "credentials win over a client range", header: testkit.BasicAuth("alice", "alice-pw"), client: netip.MustParseAddr("10.1.2.3"),
			wantToken: "AliceBot", wantSource: policy.SourceCredentials, wantUser: "alice"},
		{name: "credentials when required", required: true, header: testkit.BasicAuth("bob", "bob:pw with colon"), client: outside,
			wantToken: "BobBot", wantSource: policy.SourceCredentials, wantUser: "bob"},

		// Wrong credentials.
		{name: "wrong password", header: testkit.BasicAuth("alice", "wrong"), client: outside,
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "other user's password", header: testkit.BasicAuth("alice", "bob:pw with colon"), client: outside,
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "password prefix", header: testkit.BasicAuth("alice", "alice-p"), client: outside,
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "empty password", header: testkit.BasicAuth("alice", ""), client: outside,
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "user name is case-sensitive", header: testkit.BasicAuth("Alice", "alice-pw"), client: outside,
			wantUser: "Alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "unknown user", header: testkit.BasicAuth("mallory", "alice-pw"), client: outside,
			wantUser: "mallory", wantErr: policy.ErrProxyAuthFailed},
		{name: "wrong password from inside a pinned range", header: testkit.BasicAuth("alice", "wrong"), client: netip.MustParseAddr("10.1.2.3"),
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "unknown user from inside a pinned range", header: testkit.BasicAuth("mallory", "x"), client: netip.MustParseAddr("10.1.2.3"),
			wantUser: "mallory", wantErr: policy.ErrProxyAuthFailed},
		{name: "wrong password when not required", required: false, header: testkit.BasicAuth("bob", "nope"), client: none,
			wantUser: "bob", wantErr: policy.ErrProxyAuthFailed},

		// Malformed headers.
		{name: "Bearer scheme", header: "Bearer abc.def", client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "Digest scheme", header: `Digest username="alice"`, client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "scheme only", header: "Basic", client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "scheme and space only", header: "Basic ", client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "no scheme", header: base64.StdEncoding.EncodeToString([]byte("alice:alice-pw")), client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "bad base64", header: "Basic !!!not-base64!!!", client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "truncated base64", header: "Basic YWxpY2U6YWxpY2UtcH", client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "URL-safe base64 is not standard base64", header: "Basic " + base64.URLEncoding.EncodeToString([]byte("alice:>>>?")), client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "no colon", header: "Basic " + base64.StdEncoding.EncodeToString([]byte("alicealice-pw")), client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "empty credentials", header: "Basic " + base64.StdEncoding.EncodeToString([]byte(":")), client: outside, wantErr: policy.ErrProxyAuthFailed},
		{name: "malformed header inside a pinned range", header: "Bearer x", client: netip.MustParseAddr("10.1.2.3"), wantErr: policy.ErrProxyAuthFailed},

		// Client ranges.
		{name: "IPv4 in the wide range", client: netip.MustParseAddr("10.2.3.4"),
			wantToken: "WideBot", wantSource: policy.SourceClientRange},
		{name: "IPv4 longest prefix wins", client: netip.MustParseAddr("10.1.255.255"),
			wantToken: "NarrowBot", wantSource: policy.SourceClientRange},
		{name: "IPv4 first address of the narrow range", client: netip.MustParseAddr("10.1.0.0"),
			wantToken: "NarrowBot", wantSource: policy.SourceClientRange},
		{name: "IPv4 just outside the narrow range", client: netip.MustParseAddr("10.2.0.0"),
			wantToken: "WideBot", wantSource: policy.SourceClientRange},
		{name: "IPv4-mapped IPv6 in the narrow range", client: netip.MustParseAddr("::ffff:10.1.2.3"),
			wantToken: "NarrowBot", wantSource: policy.SourceClientRange},
		{name: "IPv4-mapped IPv6 in the wide range", client: netip.MustParseAddr("::ffff:10.9.9.9"),
			wantToken: "WideBot", wantSource: policy.SourceClientRange},
		{name: "IPv4-mapped IPv6 outside", client: netip.MustParseAddr("::ffff:203.0.113.5")},
		{name: "unmasked range is masked", client: netip.MustParseAddr("192.168.7.1"),
			wantToken: "UnmaskedBot", wantSource: policy.SourceClientRange},
		{name: "IPv6 in the wide range", client: netip.MustParseAddr("2001:db8:2::1"),
			wantToken: "SixBot", wantSource: policy.SourceClientRange},
		{name: "IPv6 longest prefix wins", client: netip.MustParseAddr("2001:db8:1:ffff::1"),
			wantToken: "SixNarrowBot", wantSource: policy.SourceClientRange},
		{name: "IPv6 with a zone", client: netip.MustParseAddr("2001:db8:1::1%eth0"),
			wantToken: "SixNarrowBot", wantSource: policy.SourceClientRange},
		{name: "link-local IPv6 with a zone", client: netip.MustParseAddr("fe80::1%eth0"),
			wantToken: "LinkLocalBot", wantSource: policy.SourceClientRange},
		{name: "IPv6 outside", client: netip.MustParseAddr("2001:db9::1")},
		{name: "IPv4 outside", client: outside},
		{name: "no client address", client: none},
		{name: "loopback outside", client: netip.MustParseAddr("127.0.0.1")},

		// Required.
		{name: "required, nothing", required: true, client: outside, wantErr: policy.ErrProxyAuthRequired},
		{name: "required, no client address", required: true, client: none, wantErr: policy.ErrProxyAuthRequired},
		{name: "required, IPv6 outside", required: true, client: netip.MustParseAddr("2001:db9::1"), wantErr: policy.ErrProxyAuthRequired},
		{name: "required, in a range", required: true, client: netip.MustParseAddr("10.1.2.3"),
			wantToken: "NarrowBot", wantSource: policy.SourceClientRange},
		{name: "required, IPv4-mapped in a range", required: true, client: netip.MustParseAddr("::ffff:10.3.2.1"),
			wantToken: "WideBot", wantSource: policy.SourceClientRange},
		{name: "required, wrong password is failed not required", required: true, header: testkit.BasicAuth("alice", "wrong"), client: outside,
			wantUser: "alice", wantErr: policy.ErrProxyAuthFailed},
		{name: "required, malformed header is failed not required", required: true, header: "Basic %%%", client: outside,
			wantErr: policy.ErrProxyAuthFailed},
	}
	pinners := map[bool]*identity.Pinner{false: newTestPinner(t, false), true: newTestPinner(t, true)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pin, err := pinners[tt.required].Pin(t.Context(), tt.header, tt.client)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Pin(%q, %v): got error %v, want none", tt.header, tt.client, err)
				}
			} else {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Pin(%q, %v): got %+v, error %v, want an error wrapping %v", tt.header, tt.client, pin, err, tt.wantErr)
				}
				other := policy.ErrProxyAuthRequired
				if tt.wantErr == policy.ErrProxyAuthRequired {
					other = policy.ErrProxyAuthFailed
				}
				if errors.Is(err, other) {
					t.Errorf("Pin(%q, %v): got error %v, which also wraps %v", tt.header, tt.client, err, other)
				}
			}
			if pin.Token != tt.wantToken || pin.Source != tt.wantSource || pin.User != tt.wantUser {
				t.Errorf("Pin(%q, %v): got Token %q Source %q User %q, want %q %q %q",
					tt.header, tt.client, pin.Token, pin.Source, pin.User, tt.wantToken, tt.wantSource, tt.wantUser)
			}
			id := pin.Identity()
			if tt.wantToken == "" {
				if id.Token != "" || len(id.Candidates) != 0 {
					t.Errorf("Pin(%q, %v).Identity(): got %+v, want the zero Identity", tt.header, tt.client, id)
				}
				return
			}
			want := identity.Identity{Token: tt.wantToken, Candidates: []string{tt.wantToken}, Source: tt.wantSource, User: tt.wantUser}
			if id.Token != want.Token || len(id.Candidates) != 1 || id.Candidates[0] != want.Token || id.Source != want.Source || id.User != want.User {
				t.Errorf("Pin(%q, %v).Identity(): got %+v, want %+v", tt.header, tt.client, id, want)
			}
		})
	}
}

// TestPinErrorsDoNotLeakPasswords checks that failure messages, which end
// up in logs, never contain the password tried.
func TestPinErrorsDoNotLeakPasswords(t *testing.T) {
	p := newTestPinner(t, true)
	for _, h := range []string{testkit.BasicAuth("alice", "Sup3rSecretGuess"), testkit.BasicAuth("nobody", "Sup3rSecretGuess")} {
		_, err := p.Pin(t.Context(), h, netip.Addr{})
		if err == nil || strings.Contains(err.Error(), "Sup3rSecretGuess") || strings.Contains(err.Error(), strings.TrimPrefix(h, "Basic ")) {
			t.Errorf("Pin(%q): got error %v, want an error without the password or the encoded credentials", h, err)
		}
	}
}

func TestPinNilPinner(t *testing.T) {
	var p *identity.Pinner
	for _, h := range []string{"", testkit.BasicAuth("alice", "x"), "garbage"} {
		pin, err := p.Pin(t.Context(), h, netip.MustParseAddr("10.1.2.3"))
		if err != nil || pin.Token != "" || pin.Source != "" || pin.User != "" {
			t.Errorf("(*Pinner)(nil).Pin(%q): got %+v, %v, want the zero Pin and no error", h, pin, err)
		}
	}
	if p.Enabled() {
		t.Errorf("(*Pinner)(nil).Enabled(): got true, want false")
	}
}

func TestPinnerEnabled(t *testing.T) {
	h := testkit.BcryptHash(t, "pw")
	tests := []struct {
		name string
		o    identity.PinOptions
		want bool
	}{
		{"nothing", identity.PinOptions{}, false},
		{"users", identity.PinOptions{Users: []identity.User{{Name: "u", PasswordHash: h, Token: "Bot"}}}, true},
		{"ranges", identity.PinOptions{Ranges: []identity.ClientRange{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "Bot"}}}, true},
		{"required", identity.PinOptions{Required: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := identity.NewPinner(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Enabled(); got != tt.want {
				t.Errorf("NewPinner(%+v).Enabled(): got %v, want %v", tt.o, got, tt.want)
			}
		})
	}
}

func TestNewPinnerErrors(t *testing.T) {
	good := testkit.BcryptHash(t, "pw")
	user := func(name, token string, hash []byte) identity.User {
		return identity.User{Name: name, PasswordHash: hash, Token: token}
	}
	rng := func(prefix netip.Prefix, token string) identity.ClientRange {
		return identity.ClientRange{Prefix: prefix, Token: token}
	}
	p8 := netip.MustParsePrefix("10.0.0.0/8")
	tests := []struct {
		name string
		o    identity.PinOptions
		want []string // in the error; nil means no error
	}{
		{name: "valid", o: identity.PinOptions{Users: []identity.User{user("a", "A", good), user("b", "A", good)}, Ranges: []identity.ClientRange{rng(p8, "R")}}},
		{name: "valid $2b$ and $2y$ hashes", o: identity.PinOptions{Users: []identity.User{
			user("a", "A", []byte("$2b"+string(good[3:]))), user("b", "B", []byte("$2y"+string(good[3:])))}}},
		{name: "valid token forms", o: identity.PinOptions{Users: []identity.User{user("a", "My_Crawler-x", good)}}},
		{name: "valid name with spaces and unicode", o: identity.PinOptions{Users: []identity.User{user("Ünïcode user", "A", good)}}},
		{name: "empty name", o: identity.PinOptions{Users: []identity.User{user("", "A", good)}}, want: []string{"user 0", "name"}},
		{name: "name with colon", o: identity.PinOptions{Users: []identity.User{user("a", "A", good), user("b:c", "B", good)}}, want: []string{"user 1", `"b:c"`, "colon"}},
		{name: "duplicate user", o: identity.PinOptions{Users: []identity.User{user("a", "A", good), user("b", "B", good), user("a", "C", good)}}, want: []string{"user 2", `"a"`, "duplicate"}},
		{name: "empty token", o: identity.PinOptions{Users: []identity.User{user("a", "", good)}}, want: []string{"user 0", "product token"}},
		{name: "token with digit", o: identity.PinOptions{Users: []identity.User{user("a", "Bot2", good)}}, want: []string{"user 0", `"Bot2"`}},
		{name: "token with slash", o: identity.PinOptions{Users: []identity.User{user("a", "Bot/1.0", good)}}, want: []string{"user 0", "Bot/1.0"}},
		{name: "token with space", o: identity.PinOptions{Users: []identity.User{user("a", "My Bot", good)}}, want: []string{"user 0"}},
		{name: "star token", o: identity.PinOptions{Users: []identity.User{user("a", "*", good)}}, want: []string{"user 0"}},
		{name: "plain-text password", o: identity.PinOptions{Users: []identity.User{user("a", "A", []byte("hunter2"))}}, want: []string{"user 0", "password hash"}},
		{name: "empty hash", o: identity.PinOptions{Users: []identity.User{user("a", "A", nil)}}, want: []string{"user 0", "password hash"}},
		{name: "truncated hash", o: identity.PinOptions{Users: []identity.User{user("a", "A", good[:20])}}, want: []string{"user 0", "password hash"}},
		{name: "SHA-512 crypt hash", o: identity.PinOptions{Users: []identity.User{user("a", "A", []byte("$6$salt$abcdefghijklmnopqrstuvwxyz0123456789"))}}, want: []string{"user 0", "password hash"}},
		{name: "invalid range", o: identity.PinOptions{Ranges: []identity.ClientRange{rng(p8, "A"), rng(netip.Prefix{}, "B")}}, want: []string{"client range 1"}},
		{name: "range with bad token", o: identity.PinOptions{Ranges: []identity.ClientRange{rng(p8, "Bot9")}}, want: []string{"client range 0", `"Bot9"`}},
		{name: "range with empty token", o: identity.PinOptions{Ranges: []identity.ClientRange{rng(p8, "")}}, want: []string{"client range 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := identity.NewPinner(tt.o)
			if tt.want == nil {
				if err != nil || p == nil {
					t.Fatalf("NewPinner(%+v): got %v, %v, want a Pinner", tt.o, p, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("NewPinner(%+v): got no error, want one containing %q", tt.o, tt.want)
			}
			if p != nil {
				t.Errorf("NewPinner(%+v): got a Pinner with error %v, want nil", tt.o, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("NewPinner(%+v): got error %q, want it to contain %q", tt.o, err, w)
				}
			}
		})
	}
}

// TestNewPinnerKeepsNoReference checks that changing the option slices
// after NewPinner changes nothing.
func TestNewPinnerKeepsNoReference(t *testing.T) {
	o := testPinOptions(t, false)
	p, err := identity.NewPinner(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Users[0].Token = "Changed"
	o.Users[0].Name = "eve"
	o.Ranges[1].Token = "Changed"
	o.Ranges[1].Prefix = netip.MustParsePrefix("10.2.0.0/16")
	if pin, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pw"), netip.Addr{}); err != nil || pin.Token != "AliceBot" {
		t.Errorf("after changing the options: Pin(alice): got %+v, %v, want AliceBot", pin, err)
	}
	if pin, err := p.Pin(t.Context(), "", netip.MustParseAddr("10.1.2.3")); err != nil || pin.Token != "NarrowBot" {
		t.Errorf("after changing the options: Pin(10.1.2.3): got %+v, %v, want NarrowBot", pin, err)
	}
}

// TestPinRangeOrderIndependent checks that the most specific range wins
// whatever order the ranges are configured in.
func TestPinRangeOrderIndependent(t *testing.T) {
	ranges := []identity.ClientRange{
		{Prefix: netip.MustParsePrefix("10.1.2.0/24"), Token: "C"},
		{Prefix: netip.MustParsePrefix("0.0.0.0/0"), Token: "All"},
		{Prefix: netip.MustParsePrefix("10.1.0.0/16"), Token: "B"},
		{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "A"},
		{Prefix: netip.MustParsePrefix("10.1.2.3/32"), Token: "Host"},
	}
	cases := map[string]string{
		"10.1.2.3":        "Host",
		"10.1.2.4":        "C",
		"10.1.3.4":        "B",
		"10.2.3.4":        "A",
		"192.0.2.1":       "All",
		"::ffff:10.1.2.3": "Host",
	}
	for rot := range ranges {
		rotated := append(append([]identity.ClientRange(nil), ranges[rot:]...), ranges[:rot]...)
		for _, reverse := range []bool{false, true} {
			order := append([]identity.ClientRange(nil), rotated...)
			if reverse {
				for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
					order[i], order[j] = order[j], order[i]
				}
			}
			p, err := identity.NewPinner(identity.PinOptions{Ranges: order})
			if err != nil {
				t.Fatal(err)
			}
			for addr, want := range cases {
				pin, err := p.Pin(t.Context(), "", netip.MustParseAddr(addr))
				if err != nil || pin.Token != want || pin.Source != policy.SourceClientRange {
					t.Errorf("ranges %v: Pin(%s): got %+v, %v, want Token %q from a client range", order, addr, pin, err, want)
				}
			}
		}
	}
}

// TestPinMemo checks the memo of verified credentials: a second check of
// the same header is answered from it without bcrypt, failures are never
// remembered, and the memo stays bounded.
func TestPinMemo(t *testing.T) {
	t.Run("success is remembered", func(t *testing.T) {
		p := newTestPinner(t, true)
		h := testkit.BasicAuth("alice", "alice-pw")
		if n := identity.VerifiedLen(p); n != 0 {
			t.Fatalf("new Pinner: got %d remembered credentials, want 0", n)
		}
		first, err := p.Pin(t.Context(), h, netip.Addr{})
		if err != nil {
			t.Fatalf("first Pin: %v", err)
		}
		if n := identity.VerifiedLen(p); n != 1 {
			t.Fatalf("after one success: got %d remembered credentials, want 1", n)
		}
		// No password matches the stored hash any more: only the memo can
		// answer.
		identity.BreakPasswordHash(p, "alice")
		second, err := p.Pin(t.Context(), h, netip.Addr{})
		if err != nil {
			t.Fatalf("second Pin of the same header: got error %v, want the remembered pin (bcrypt ran again)", err)
		}
		if second.Token != first.Token || second.Source != first.Source || second.User != first.User {
			t.Errorf("second Pin: got %+v, want %+v", second, first)
		}
		if n := identity.VerifiedLen(p); n != 1 {
			t.Errorf("after a remembered check: got %d remembered credentials, want 1", n)
		}
		// A differently spelt header is another key and goes to bcrypt.
		other := "basic " + strings.TrimPrefix(h, "Basic ")
		if _, err := p.Pin(t.Context(), other, netip.Addr{}); !errors.Is(err, policy.ErrProxyAuthFailed) {
			t.Errorf("Pin(%q) after the hash changed: got error %v, want ErrProxyAuthFailed", other, err)
		}
	})
	t.Run("failures are never remembered", func(t *testing.T) {
		p := newTestPinner(t, false)
		for _, h := range []string{testkit.BasicAuth("alice", "wrong"), testkit.BasicAuth("alice", "wrong"), testkit.BasicAuth("mallory", "x"), "Basic !!", "Bearer x", testkit.BasicAuth("bob", "")} {
			if _, err := p.Pin(t.Context(), h, netip.Addr{}); err == nil {
				t.Fatalf("Pin(%q): got no error, want one", h)
			}
			if n := identity.VerifiedLen(p); n != 0 {
				t.Fatalf("after failed Pin(%q): got %d remembered credentials, want 0", h, n)
			}
		}
		// Range pins are not credentials: nothing to remember.
		if _, err := p.Pin(t.Context(), "", netip.MustParseAddr("10.1.2.3")); err != nil {
			t.Fatal(err)
		}
		if n := identity.VerifiedLen(p); n != 0 {
			t.Errorf("after a range pin: got %d remembered credentials, want 0", n)
		}
	})
	t.Run("wrong password after a success still fails", func(t *testing.T) {
		p := newTestPinner(t, false)
		if _, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pw"), netip.Addr{}); err != nil {
			t.Fatal(err)
		}
		if pin, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pwX"), netip.Addr{}); !errors.Is(err, policy.ErrProxyAuthFailed) {
			t.Errorf("wrong password after a success: got %+v, %v, want ErrProxyAuthFailed", pin, err)
		}
		if n := identity.VerifiedLen(p); n != 1 {
			t.Errorf("got %d remembered credentials, want 1", n)
		}
	})
	t.Run("each user is remembered apart", func(t *testing.T) {
		p := newTestPinner(t, false)
		for _, c := range []struct{ user, pw, token string }{{"alice", "alice-pw", "AliceBot"}, {"bob", "bob:pw with colon", "BobBot"}, {"alice", "alice-pw", "AliceBot"}} {
			pin, err := p.Pin(t.Context(), testkit.BasicAuth(c.user, c.pw), netip.Addr{})
			if err != nil || pin.Token != c.token || pin.User != c.user {
				t.Errorf("Pin(%s): got %+v, %v, want Token %q User %q", c.user, pin, err, c.token, c.user)
			}
		}
		if n := identity.VerifiedLen(p); n != 2 {
			t.Errorf("got %d remembered credentials, want 2", n)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		p := newTestPinner(t, false)
		identity.FillVerified(p, identity.VerifiedMax-1)
		if _, err := p.Pin(t.Context(), testkit.BasicAuth("alice", "alice-pw"), netip.Addr{}); err != nil {
			t.Fatal(err)
		}
		if n := identity.VerifiedLen(p); n != identity.VerifiedMax {
			t.Fatalf("filled to the bound: got %d remembered credentials, want %d", n, identity.VerifiedMax)
		}
		if _, err := p.Pin(t.Context(), testkit.BasicAuth("bob", "bob:pw with colon"), netip.Addr{}); err != nil {
			t.Fatal(err)
		}
		if n := identity.VerifiedLen(p); n != 1 {
			t.Errorf("one past the bound: got %d remembered credentials, want 1 (cleared, then the new one)", n)
		}
	})
}

// TestPinConcurrent exercises the memo from many goroutines; run with
// -race.
func TestPinConcurrent(t *testing.T) {
	p := newTestPinner(t, true)
	headers := []struct {
		header string
		token  string // "" means an error
	}{
		{testkit.BasicAuth("alice", "alice-pw"), "AliceBot"},
		{testkit.BasicAuth("bob", "bob:pw with colon"), "BobBot"},
		{testkit.BasicAuth("alice", "wrong"), ""},
		{"", "NarrowBot"},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				h := headers[(g+i)%len(headers)]
				pin, err := p.Pin(t.Context(), h.header, netip.MustParseAddr("10.1.0.1"))
				if (err == nil) != (h.token != "") || pin.Token != h.token {
					select {
					case errs <- fmt.Errorf("Pin(%q): got %+v, %v, want Token %q", h.header, pin, err, h.token):
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := identity.VerifiedLen(p); n != 2 {
		t.Errorf("got %d remembered credentials, want 2", n)
	}
}

// TestPinNoUsersIgnoresCredentials: with no users configured a
// Proxy-Authorization header (meant for a proxy further along a chain) is
// ignored, so the client range or the User-Agent decides.
func TestPinNoUsersIgnoresCredentials(t *testing.T) {
	p, err := identity.NewPinner(identity.PinOptions{Ranges: []identity.ClientRange{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "RangeBot"}}})
	if err != nil {
		t.Fatal(err)
	}
	pin, err := p.Pin(t.Context(), testkit.BasicAuth("someone", "pw"), netip.MustParseAddr("10.1.1.1"))
	if err != nil || pin.Token != "RangeBot" || pin.Source != policy.SourceClientRange {
		t.Errorf("got %+v, %v; want the range's pin and no error", pin, err)
	}
	if pin, err := p.Pin(t.Context(), "Garbage", netip.MustParseAddr("192.0.2.1")); err != nil || pin.Token != "" {
		t.Errorf("got %+v, %v; want nothing pinned and no error", pin, err)
	}
}

// TestPinMappedRange: an IPv4-mapped IPv6 range matches the IPv4 clients it
// names, since clients are unmapped before matching.
func TestPinMappedRange(t *testing.T) {
	p, err := identity.NewPinner(identity.PinOptions{Ranges: []identity.ClientRange{{Prefix: netip.MustParsePrefix("::ffff:10.0.0.0/104"), Token: "MappedBot"}}})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{"10.2.3.4": "MappedBot", "::ffff:10.2.3.4": "MappedBot", "11.0.0.1": ""} {
		if pin, _ := p.Pin(t.Context(), "", netip.MustParseAddr(addr)); pin.Token != want {
			t.Errorf("client %s: pinned %q, want %q", addr, pin.Token, want)
		}
	}
}

// TestPinCarriesMode: a pin carries the mode of the user or client range
// that pinned it; "" leaves the policy's default.
func TestPinCarriesMode(t *testing.T) {
	p, err := identity.NewPinner(identity.PinOptions{
		Users: []identity.User{
			{Name: "alice", PasswordHash: testkit.BcryptHash(t, "alice-pw"), Token: "AliceBot", Mode: policy.ModeReport},
			{Name: "bob", PasswordHash: testkit.BcryptHash(t, "bob-pw"), Token: "BobBot"},
		},
		Ranges: []identity.ClientRange{
			{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "ReportBot", Mode: policy.ModeReport},
			{Prefix: netip.MustParsePrefix("10.1.0.0/16"), Token: "EnforceBot", Mode: policy.ModeEnforce},
			{Prefix: netip.MustParsePrefix("192.0.2.0/24"), Token: "DefaultBot"},
			{Prefix: netip.MustParsePrefix("::ffff:198.51.100.0/120"), Token: "MappedBot", Mode: policy.ModeReport},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		header, client string
		wantToken      string
		wantMode       policy.Mode
	}{
		{testkit.BasicAuth("alice", "alice-pw"), "203.0.113.1", "AliceBot", policy.ModeReport},
		{testkit.BasicAuth("bob", "bob-pw"), "203.0.113.1", "BobBot", ""},
		{"", "10.2.3.4", "ReportBot", policy.ModeReport},
		{"", "10.1.2.3", "EnforceBot", policy.ModeEnforce},
		{"", "192.0.2.9", "DefaultBot", ""},
		{"", "198.51.100.7", "MappedBot", policy.ModeReport},
	} {
		pin, err := p.Pin(t.Context(), tt.header, netip.MustParseAddr(tt.client))
		if err != nil || pin.Token != tt.wantToken || pin.Mode != tt.wantMode {
			t.Errorf("Pin(%q, %s): got token %q mode %q (%v), want %q mode %q", tt.header, tt.client, pin.Token, pin.Mode, err, tt.wantToken, tt.wantMode)
		}
	}
}
