package access

import (
	"net"
	"strings"
)

// RobotsURL returns the robots.txt URL for a canonical scheme and authority
// (see policy.Authority), without the scheme's default port (RFC 9309 2.3).
func RobotsURL(scheme, authority string) string {
	return Origin(scheme, authority) + "/robots.txt"
}

// Origin returns "scheme://authority" for a canonical scheme and authority
// (see policy.Authority), without the scheme's default port: the site
// whose robots.txt applies (RFC 9309 2.3), as RobotsURL names it.
func Origin(scheme, authority string) string {
	return scheme + "://" + displayAuthority(scheme, authority)
}

// displayAuthority drops the scheme's default port from host:port.
func displayAuthority(scheme, authority string) string {
	host, port, _ := net.SplitHostPort(authority)
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return authority
}
