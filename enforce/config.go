package enforce

import (
	"io"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Config is robotsproxy's configuration, as serve reads config.yaml
// (docs/configuration.md). The top-level settings that act on a crawler's
// requests in process are fields, set from the file by LoadConfig and
// ParseConfig and free to change in code before New; the sections
// (identity, robots, cache, politeness, usage, log, audit, signing,
// payments, shared, client) are read from the file, with serve's defaults
// where it says nothing, and the keys about the proxy's sockets
// (listeners, connect, mitm, upstream, the admin endpoint) have no effect
// here. A Config made in code, the zero Config included, has serve's
// defaults for every section. New validates it, naming the key at fault.
type Config struct {
	// Mode is how robots.txt denials are acted on (mode):
	// policy.ModeEnforce answers them with the proxy's 403 and sends
	// nothing; policy.ModeReport forwards them and audits the denial
	// ("enforced": false). "" means policy.ModeEnforce. A user's or client
	// range's own mode (identity.*.mode) wins.
	Mode policy.Mode
	// AllowPrivate lets robots.txt be fetched from loopback, private and
	// link-local addresses (allow_private). Default false: such an
	// address makes robots.txt unreachable, a complete disallow. The
	// wrapped transport dials the origins itself.
	AllowPrivate bool
	// AllowPrivateRanges are CIDR ranges robots.txt may be fetched from
	// even though they are not public, e.g. "10.20.0.0/16"
	// (allow_private_ranges). Default none.
	AllowPrivateRanges []string
	// ExemptHosts are hosts allowed without robots.txt (reason override);
	// ".example.com" covers its subdomains too (exempt_hosts). Default
	// none.
	ExemptHosts []string
	// AllowHosts, when not empty, are the only hosts requests may go to
	// (allow_hosts); DenyHosts are hosts they may never go to, reason
	// host-denied (deny_hosts), and win. Same forms as ExemptHosts.
	// Default none.
	AllowHosts, DenyHosts []string

	// file is the configuration as read (LoadConfig, ParseConfig,
	// DefaultConfig): the sections come from it. Nil for a Config made in
	// code: serve's defaults.
	file *config.Config
}

// LoadConfig reads and validates a config.yaml file with serve's own
// loader. Its error names the file and the key at fault; an unknown key is
// an error, as it is for serve.
func LoadConfig(path string) (Config, error) {
	c, err := config.LoadFile(path)
	return fromFile(c), err
}

// ParseConfig reads and validates configuration YAML from r, as
// LoadConfig does for a file.
func ParseConfig(r io.Reader) (Config, error) {
	c, err := config.Load(r)
	return fromFile(c), err
}

// DefaultConfig returns serve's defaults (mode enforce, destinations on
// loopback and private networks refused, crawl delays ignored unless
// politeness.crawl_delay is enforce).
func DefaultConfig() Config { return fromFile(config.Default()) }

// fromFile returns the Config of the configuration c as read.
func fromFile(c config.Config) Config {
	return Config{Mode: policy.Mode(c.Mode), AllowPrivate: c.AllowPrivate, AllowPrivateRanges: c.AllowPrivateRanges,
		ExemptHosts: c.ExemptHosts, AllowHosts: c.AllowHosts, DenyHosts: c.DenyHosts, file: &c}
}

// serve returns the configuration serve would run with: the file's (or
// the defaults'), with c's fields in place of their keys.
func (c Config) serve() config.Config {
	out := config.Default()
	if c.file != nil {
		out = *c.file
	}
	out.Mode = string(c.Mode)
	if out.Mode == "" {
		out.Mode = string(policy.ModeEnforce)
	}
	out.AllowPrivate = c.AllowPrivate
	out.AllowPrivateRanges = orNone(c.AllowPrivateRanges)
	out.ExemptHosts, out.AllowHosts, out.DenyHosts = orNone(c.ExemptHosts), orNone(c.AllowHosts), orNone(c.DenyHosts)
	return out
}

// orNone returns l, or an empty list for nil, as the configuration
// writes none.
func orNone(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
