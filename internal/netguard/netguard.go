// Package netguard refuses outbound connections to loopback, private,
// link-local and other non-public addresses, checked on the resolved
// address at dial time so that DNS answers cannot route around it.
//
// Both the proxy's upstream transport and its robots.txt fetcher dial
// through the same Guard, redirects included.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrRefused is wrapped by every error a Guard returns for a refused
// destination; test for it with errors.Is.
var ErrRefused = errors.New("destination address refused")

// Guard decides which resolved addresses may be dialled.
type Guard struct {
	// AllowPrivate permits every address, private ones included.
	AllowPrivate bool
	// Allow lists address ranges permitted even though they are not
	// public (for example 10.1.0.0/16 for an internal crawl target).
	Allow []netip.Prefix
}

// nonPublic lists ranges that are never dialled unless allowed: loopback,
// RFC 1918 and RFC 4193 private, link-local, CGNAT, unspecified,
// documentation, benchmarking, multicast and reserved ranges.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("224.0.0.0/3"),
	netip.MustParsePrefix("::/127"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// Check returns nil when ip may be dialled, or an error wrapping ErrRefused.
func (g *Guard) Check(ip netip.Addr) error {
	ip = ip.Unmap()
	if g.AllowPrivate {
		return nil
	}
	for _, p := range g.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in non-public range %s (allow it with -allow-private or allow_private_ranges)", ErrRefused, ip, p)
		}
	}
	return nil
}

// control is a net.Dialer Control hook: it runs after name resolution,
// just before connect, with the literal address about to be dialled.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q: %v", ErrRefused, address, err)
	}
	return g.Check(ap.Addr())
}

// Dialer returns a net.Dialer whose connections are checked by g, with the
// given connect timeout (0 means none) and TCP keep-alive.
func (g *Guard) Dialer(connectTimeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second, Control: g.control}
}

// DialContext dials like net.Dialer.DialContext through g with the given
// connect timeout; it suits http.Transport.DialContext.
func (g *Guard) DialContext(connectTimeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return g.Dialer(connectTimeout).DialContext
}

// IsRefused reports whether err was caused by a refused destination.
func IsRefused(err error) bool { return errors.Is(err, ErrRefused) }
