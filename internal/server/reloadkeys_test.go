package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestDiffConfig: reloadable keys are listed as applied and keep the
// file's value; restart-only keys are listed as needing a restart and keep
// the running value; an empty list equals a missing one.
func TestDiffConfig(t *testing.T) {
	cases := []struct {
		name             string
		mod              func(*config.Config)
		applied, restart []string
	}{
		{"no change", func(*config.Config) {}, nil, nil},
		{"empty list and null list are the same", func(c *config.Config) { c.DenyHosts = nil }, nil, nil},
		{"host lists", func(c *config.Config) {
			c.DenyHosts = []string{"a.example"}
			c.ExemptHosts = []string{".b.example"}
		}, []string{"exempt_hosts", "deny_hosts"}, nil},
		{"identity keys one by one", func(c *config.Config) {
			c.Identity.ClientRanges = []config.ClientRangeRule{{CIDR: "10.0.0.0/8", Token: "SandboxBot"}}
			c.Identity.AuthThrottle.Burst = 9
		}, []string{"identity.client_ranges", "identity.auth_throttle.burst"}, nil},
		{"mode, connect, shutdown_timeout", func(c *config.Config) {
			c.Mode = "report"
			c.Connect.Ports = []int{443, 8443}
			c.ShutdownTimeout = time.Second
		}, []string{"mode", "connect.ports", "shutdown_timeout"}, nil},
		{"listen", func(c *config.Config) { c.Listen = "127.0.0.1:1" }, nil, []string{"listen"}},
		{"restart-only and reloadable together", func(c *config.Config) {
			c.AdminListen = ""
			c.Cache.MaxTTL = time.Hour
			c.Log.File = "/var/log/robotsproxy/audit.log"
			c.MITM.CACert, c.MITM.CAKey = "ca.pem", "ca-key.pem"
			c.Client.ReadHeaderTimeout = time.Second
			c.AllowPrivate = true
			c.AllowHosts = []string{"a.example"}
		}, []string{"allow_hosts"}, []string{"admin_listen", "allow_private", "mitm.ca_cert", "mitm.ca_key",
			"log.file", "cache.max_ttl", "client.read_header_timeout"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			running := config.Default()
			file := config.Default()
			c.mod(&file)
			d := diffConfig(running, file)
			if !reflect.DeepEqual(d.applied, c.applied) {
				t.Errorf("applied: got %q, want %q", d.applied, c.applied)
			}
			if !reflect.DeepEqual(d.restart, c.restart) {
				t.Errorf("restart: got %q, want %q", d.restart, c.restart)
			}
			// next: the file with every restart-only key back at its
			// running value.
			want := file
			for _, k := range c.restart {
				restore(&want, running, k)
			}
			if !reflect.DeepEqual(d.next, want) {
				t.Errorf("next: got %+v, want %+v", d.next, want)
			}
			if again := diffConfig(running, d.next); len(again.restart) != 0 {
				t.Errorf("next still differs in restart-only keys %q", again.restart)
			}
		})
	}
}

// restore sets the restart-only key k of c back to its value in running,
// independently of diffConfig's reflection.
func restore(c *config.Config, running config.Config, k string) {
	switch k {
	case "listen":
		c.Listen = running.Listen
	case "admin_listen":
		c.AdminListen = running.AdminListen
	case "allow_private":
		c.AllowPrivate = running.AllowPrivate
	case "mitm.ca_cert":
		c.MITM.CACert = running.MITM.CACert
	case "mitm.ca_key":
		c.MITM.CAKey = running.MITM.CAKey
	case "log.file":
		c.Log.File = running.Log.File
	case "cache.max_ttl":
		c.Cache.MaxTTL = running.Cache.MaxTTL
	case "client.read_header_timeout":
		c.Client.ReadHeaderTimeout = running.Client.ReadHeaderTimeout
	}
}

// TestReloadableKeysExist: every reloadable key names a configuration key,
// so that a renamed key cannot silently become restart-only.
func TestReloadableKeysExist(t *testing.T) {
	known := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			name := typ.Field(i).Tag.Get("yaml")
			if prefix != "" {
				name = prefix + "." + name
			}
			known[name] = true
			if f := typ.Field(i).Type; f.Kind() == reflect.Struct {
				walk(name, f)
			}
		}
	}
	walk("", reflect.TypeFor[config.Config]())
	for _, k := range reloadableKeys {
		if !known[k] {
			t.Errorf("reloadable key %q: not a configuration key", k)
		}
	}
}
