package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// validateAccess checks the keys of pinned identities, destination host
// lists, CONNECT and interception. Errors name the key.
func (c *Config) validateAccess() error {
	seen := map[string]bool{}
	for i, u := range c.Identity.Users {
		key := fmt.Sprintf("identity.users[%d]", i)
		switch {
		case u.Name == "" || strings.Contains(u.Name, ":"):
			return fmt.Errorf("%s.name: must be non-empty and contain no colon, got %q", key, u.Name)
		case seen[u.Name]:
			return fmt.Errorf("%s.name: duplicate user %q", key, u.Name)
		case !robots.IsProductToken(u.Token):
			return fmt.Errorf("%s.token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", key, u.Token)
		}
		if _, err := rules.ParseMode(u.Mode); err != nil {
			return fmt.Errorf("%s.mode: %w", key, err)
		}
		if _, err := bcrypt.Cost([]byte(u.PasswordBcrypt)); err != nil {
			return fmt.Errorf("%s.password_bcrypt: not a bcrypt hash (make one with \"robotsproxy hash-password\"): %v", key, err)
		}
		seen[u.Name] = true
	}
	for i, r := range c.Identity.ClientRanges {
		key := fmt.Sprintf("identity.client_ranges[%d]", i)
		if _, err := netip.ParsePrefix(r.CIDR); err != nil {
			return fmt.Errorf("%s.cidr: want a CIDR range such as 10.0.0.0/8, got %q", key, r.CIDR)
		}
		if !robots.IsProductToken(r.Token) {
			return fmt.Errorf("%s.token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", key, r.Token)
		}
		if _, err := rules.ParseMode(r.Mode); err != nil {
			return fmt.Errorf("%s.mode: %w", key, err)
		}
	}
	if c.Identity.RequireCredentials && len(c.Identity.Users) == 0 && len(c.Identity.ClientRanges) == 0 {
		return errors.New("identity.require_credentials: no identity.users or identity.client_ranges are configured, so every request would get 407")
	}
	lists := []struct {
		key  string
		list []string
	}{{"exempt_hosts", c.ExemptHosts}, {"allow_hosts", c.AllowHosts}, {"deny_hosts", c.DenyHosts}}
	for _, l := range lists {
		for i, h := range l.list {
			if err := rules.CheckHostEntry(h); err != nil {
				return fmt.Errorf("%s[%d]: want a host such as example.com, .example.com or 192.0.2.1: %w", l.key, i, err)
			}
		}
	}
	return c.validateTunnels()
}

func (c *Config) validateTunnels() error {
	if len(c.Connect.Ports) == 0 && !c.Connect.Refuse {
		return errors.New("connect.ports: must list at least one port (or set connect.refuse)")
	}
	for i, p := range c.Connect.Ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("connect.ports[%d]: want a port from 1 to 65535, got %d", i, p)
		}
	}
	if (c.MITM.CACert == "") != (c.MITM.CAKey == "") {
		return errors.New("mitm: set both mitm.ca_cert and mitm.ca_key (or -ca-cert and -ca-key), or neither")
	}
	if err := oneOf(c.MITM.Mode, MITMIntercept, MITMHostLevel); err != nil {
		return fmt.Errorf("mitm.mode: %w", err)
	}
	if c.MITM.Mode == MITMHostLevel && c.MITM.CACert != "" {
		return errors.New("mitm.mode: host-level leaves tunnels unintercepted, so mitm.ca_cert (or -ca-cert) would not be used: set one or the other")
	}
	return atLeastKey("mitm.max_certs", c.MITM.MaxCerts, 1)
}

func atLeastKey(key string, n, min int) error {
	if err := atLeast(n, min, ""); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}
