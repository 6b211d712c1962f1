package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// DefaultConnectPorts are the ports CONNECT may reach when neither
// connect.ports nor policy.Options.ConnectPorts names any: 443 only.
func DefaultConnectPorts() []int { return []int{443} }

// CheckHostEntry validates an entry of a host list (exempt, allow or deny
// hosts): a host name ("example.com", internationalised names allowed), an
// IP address ("192.0.2.1", "2001:db8::1", "[2001:db8::1]"), or a host name
// with a leading "." for it and its subdomains. Wildcards, ports, paths and
// URLs are errors: they would never match.
func CheckHostEntry(entry string) error {
	h, sub := strings.CutPrefix(entry, ".")
	if bare := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"); bare != h || strings.Contains(h, ":") {
		if _, err := netip.ParseAddr(bare); err != nil || sub || bare != h && "["+bare+"]" != h {
			return fmt.Errorf("%q is not an IP address (ports and URLs are not allowed)", entry)
		}
		return nil
	}
	if h == "" || strings.HasPrefix(h, ".") {
		return fmt.Errorf("%q has no host name", entry)
	}
	if _, err := ASCIIHost(h); err != nil {
		return fmt.Errorf("%q is not a host name: %v", entry, err)
	}
	return nil
}

// ASCIIHost lower-cases a host and converts an internationalised name to
// its ASCII (IDNA) form. ASCII names may hold letters, digits, "-", "."
// and "_" (which occurs in real DNS), or be an IP address, which is
// returned in its one canonical spelling (see canonicalIP). The policy
// keys authorities by it; host list entries are checked with it.
func ASCIIHost(host string) (string, error) {
	host = strings.ToLower(host)
	if ip, ok, err := canonicalIP(host); ok || err != nil {
		return ip, err
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= 0x80:
			ascii, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return "", fmt.Errorf("host %q: %w", host, err)
			}
			return ascii, nil
		case !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'):
			return "", fmt.Errorf("host %q: invalid character %q", host, c)
		}
	}
	return host, nil
}

// canonicalIP reports whether host is an IP address literal and returns
// its one spelling: IPv6 compressed and lower-cased as RFC 5952 4
// recommends ("[0:0:0:0:0:0:0:1]", "[::0:1]" and "[0::1]" are all "::1"),
// and an IPv4-mapped IPv6 address ("::ffff:127.0.0.1", "::ffff:7f00:1")
// as the IPv4 address it maps, which is the address that is dialled. So
// every spelling of one address is one authority: one robots.txt fetch,
// cache entry, politeness turn and destination check. An IPv6 zone
// ("fe80::1%eth0") names an interface of this machine, not a host, and
// is an error.
func canonicalIP(host string) (ip string, ok bool, err error) {
	a, perr := netip.ParseAddr(host)
	switch {
	case perr != nil:
		return "", false, nil
	case a.Zone() != "":
		return "", false, fmt.Errorf("host %q: an IPv6 zone names a local interface, not a host", host)
	}
	return a.Unmap().String(), true, nil
}
