package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

func TestCheck(t *testing.T) {
	allow10 := &netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	cases := []struct {
		name    string
		g       *netguard.Guard
		ip      string
		refused bool
	}{
		{"public v4", &netguard.Guard{}, "93.184.216.34", false},
		{"public v6", &netguard.Guard{}, "2606:2800:220:1::1", false},
		{"loopback", &netguard.Guard{}, "127.0.0.1", true},
		{"loopback other", &netguard.Guard{}, "127.45.6.7", true},
		{"v6 loopback", &netguard.Guard{}, "::1", true},
		{"v4-mapped loopback", &netguard.Guard{}, "::ffff:127.0.0.1", true},
		{"rfc1918 10", &netguard.Guard{}, "10.0.0.1", true},
		{"rfc1918 172", &netguard.Guard{}, "172.20.1.1", true},
		{"rfc1918 192", &netguard.Guard{}, "192.168.1.1", true},
		{"link-local", &netguard.Guard{}, "169.254.169.254", true},
		{"v6 link-local", &netguard.Guard{}, "fe80::1", true},
		{"v6 ula", &netguard.Guard{}, "fd00::1", true},
		{"cgnat", &netguard.Guard{}, "100.64.0.1", true},
		{"unspecified", &netguard.Guard{}, "0.0.0.0", true},
		{"allow private", &netguard.Guard{AllowPrivate: true}, "127.0.0.1", false},
		{"allowed range", allow10, "10.1.2.3", false},
		{"outside allowed range", allow10, "10.2.0.1", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.g.Check(netip.MustParseAddr(c.ip))
			if got := err != nil; got != c.refused {
				t.Fatalf("Check(%s): got refused=%v (%v), want %v", c.ip, got, err, c.refused)
			}
			if err != nil && !errors.Is(err, netguard.ErrRefused) {
				t.Errorf("error %v does not wrap ErrRefused", err)
			}
		})
	}
}

// TestDialChecksResolvedAddress: a host name that resolves to loopback is
// refused at dial time, and the listener never sees a connection.
func TestDialChecksResolvedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dial := (&netguard.Guard{}).DialContext(time.Second)
	for _, host := range []string{"localhost", "127.0.0.1"} {
		_, err := dial(context.Background(), "tcp", net.JoinHostPort(host, port))
		if !netguard.IsRefused(err) {
			t.Errorf("dial %s: got %v, want a refusal", host, err)
		}
	}
	select {
	case <-accepted:
		t.Fatal("a refused dial reached the listener")
	case <-time.After(50 * time.Millisecond):
	}
	conn, err := (&netguard.Guard{AllowPrivate: true}).DialContext(time.Second)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial with AllowPrivate: %v", err)
	}
	conn.Close()
}
