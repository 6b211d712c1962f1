package server

import (
	"net/netip"
	"testing"

	"golang.org/x/time/rate"
)

// TestPerClientLimit: one line per client address per interval; another
// address has its own.
func TestPerClientLimit(t *testing.T) {
	p := &perClient{limiters: map[netip.Addr]*rate.Limiter{}}
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	for i, tt := range []struct {
		addr netip.Addr
		want bool
	}{{a, true}, {a, false}, {b, true}, {a, false}, {b, false}} {
		if got := p.allow(tt.addr); got != tt.want {
			t.Errorf("call %d for %v: allow = %v, want %v", i, tt.addr, got, tt.want)
		}
	}
}
