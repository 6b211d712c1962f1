package config

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// validateExposure refuses an open proxy: a proxy listener beyond loopback
// with no identity.users and no identity.client_ranges, or an admin
// listener (/metrics and /readyz show the proxy's traffic and state) beyond loopback, unless
// allow_open_proxy says the operator means it.
func (c *Config) validateExposure() error {
	if c.AllowOpenProxy {
		return nil
	}
	pinned := len(c.Identity.Users) > 0 || len(c.Identity.ClientRanges) > 0
	if !pinned && !isLoopback(c.Listen) {
		return fmt.Errorf("listen: %q is reachable beyond this machine and neither identity.users nor "+
			"identity.client_ranges is configured, so anyone who reaches it can use it (an open proxy): "+
			"configure credentials or client ranges, or set allow_open_proxy: true (-allow-open-proxy) "+
			"if a firewall guards it; see \"Security model\" in README.md", c.Listen)
	}
	if c.AdminListen != "" && !isLoopback(c.AdminListen) {
		return fmt.Errorf("admin_listen: %q is reachable beyond this machine and /metrics has no "+
			"authentication: listen on loopback, or set allow_open_proxy: true (-allow-open-proxy) "+
			"if a firewall or network policy guards it; see \"Security model\" in README.md", c.AdminListen)
	}
	return nil
}

// isLoopback reports whether a HOST:PORT listen address binds loopback
// only: "localhost" or a loopback IP. An empty host (":8080") binds every
// interface; any other name may resolve anywhere.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
