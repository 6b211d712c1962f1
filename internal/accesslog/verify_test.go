package accesslog

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/dnstest"
)

func TestVerifierFCrDNS(t *testing.T) {
	addr := dnstest.Server(t, dnstest.Zone{
		PTR: map[string]string{
			"1.66.249.66.in-addr.arpa.":  "crawl-66-249-66-1.googlebot.com.",
			"9.113.0.203.in-addr.arpa.":  "googlebot.com.evil.example.",
			"10.113.0.203.in-addr.arpa.": "spoof.googlebot.com.",
			"12.113.0.203.in-addr.arpa.": "msnbot-203-0-113-12.search.msn.com.",
			"13.113.0.203.in-addr.arpa.": "x.search.msn.com.",
		},
		A: map[string]string{
			"crawl-66-249-66-1.googlebot.com.":    "66.249.66.1",
			"spoof.googlebot.com.":                "198.51.100.1",
			"googlebot.com.evil.example.":         "203.0.113.9",
			"msnbot-203-0-113-12.search.msn.com.": "203.0.113.12",
		},
		Fail: map[string]bool{"13.113.0.203.in-addr.arpa.": true, "x.search.msn.com.": true},
	})
	d := net.Dialer{Timeout: time.Second}
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "udp", addr)
	}}
	v := &Verifier{
		Ranges:   map[string][]netip.Prefix{"googlebot": {netip.MustParsePrefix("66.249.79.224/27")}},
		Domains:  DefaultDomains(),
		Resolver: res,
		Timeout:  2 * time.Second,
	}
	tests := []struct{ token, client, want string }{
		{"Googlebot", "66.249.79.230", Verified},     // in the published ranges
		{"Googlebot", "66.249.66.1", Verified},       // outside them, confirmed by DNS
		{"Googlebot", "203.0.113.9", Impostor},       // PTR outside Google's domains
		{"Googlebot", "203.0.113.10", Impostor},      // PTR inside, but it resolves elsewhere
		{"Googlebot", "203.0.113.11", Impostor},      // no PTR
		{"Googlebot", "crawler.example", Unverified}, // a host name, not an address
		{"bingbot", "203.0.113.12", Verified},        // no ranges given; DNS confirms
		{"bingbot", "203.0.113.13", Unverified},      // DNS fails: nothing to say
		{"bingbot", "203.0.113.11", Impostor},
	}
	for _, tt := range tests {
		if !v.Claims(tt.token) {
			t.Fatalf("Claims(%s) = false", tt.token)
		}
		if got := v.Verify(context.Background(), tt.token, tt.client); got != tt.want {
			t.Errorf("%s from %s: %s, want %s", tt.token, tt.client, got, tt.want)
		}
	}
	if (&Verifier{Domains: DefaultDomains()}).Claims("bingbot") {
		t.Error("without a resolver nor ranges, bingbot cannot be verified")
	}
	if strings.Contains(v.Verify(context.Background(), "Googlebot", "[::ffff:66.249.79.230]"), Impostor) {
		t.Error("an IPv4-mapped address in brackets is the IPv4 address")
	}
	// Every Googlebot request from an address was checked against the
	// ranges: two inside, four outside (one of them confirmed by DNS).
	trs := v.TokenRanges()
	if len(trs) != 1 || trs[0].Requests != 6 || trs[0].Inside != 2 || trs[0].Outside != 4 || trs[0].Near != 1 {
		t.Errorf("token ranges %+v", trs)
	}
}
