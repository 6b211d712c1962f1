package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/identity"
)

// LoadFile reads and validates the configuration file at path.
func LoadFile(path string) (Config, error) {
	return fileWith(path, Load)
}

// DecodeFile is LoadFile without validation, for a caller that completes
// the configuration (command-line flags) and then calls Validate.
func DecodeFile(path string) (Config, error) {
	return fileWith(path, Decode)
}

func fileWith(path string, read func(io.Reader) (Config, error)) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	cfg, err := read(f)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Load decodes YAML from r over Default() and validates the result. Unknown
// keys, wrong types and invalid values are errors naming the key.
func Load(r io.Reader) (Config, error) {
	cfg, err := Decode(r)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Decode decodes YAML from r over Default(), without validating the
// values: unknown keys and wrong types are errors naming the key.
func Decode(r io.Reader) (Config, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("read: %w", err)
	}
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, nameKeys(raw, err)
	}
	return cfg, nil
}

var lineRE = regexp.MustCompile(`line (\d+): `)

// nameKeys rewrites "line N: ..." in a YAML decoding error into
// "KEY (line N): ...", KEY being the dotted path of the key on line N.
func nameKeys(raw []byte, err error) error {
	keys := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(raw, &root) == nil {
		walkKeys(&root, "", keys)
	} else {
		keysByText(raw, keys) // a syntax error: no tree, read the key off the line
	}
	msg := lineRE.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, _ := strconv.Atoi(lineRE.FindStringSubmatch(m)[1])
		if k, ok := keys[n]; ok {
			return fmt.Sprintf("%s (line %d): ", k, n)
		}
		return m
	})
	return errors.New(msg)
}

var keyLineRE = regexp.MustCompile(`^\s*-?\s*([A-Za-z0-9_]+)\s*:`)

// keysByText records, for each line that starts with "key:", that key.
func keysByText(raw []byte, keys map[int]string) {
	for i, line := range strings.Split(string(raw), "\n") {
		if m := keyLineRE.FindStringSubmatch(line); m != nil {
			keys[i+1] = m[1]
		}
	}
}

// walkKeys records the dotted key path of every mapping key and value line.
func walkKeys(n *yaml.Node, prefix string, keys map[int]string) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := prefix
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", prefix, i)
			}
			walkKeys(c, p, keys)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			keys[k.Line] = path
			if _, seen := keys[v.Line]; !seen || v.Line != k.Line {
				keys[v.Line] = path
			}
			walkKeys(v, path, keys)
		}
	}
}

// Validate checks every value and returns the first problem, naming its key.
func (c *Config) Validate() error {
	checks := []struct {
		key string
		err error
	}{
		{"mode", oneOf(c.Mode, "enforce", "report")},
		{"listen", hostPort(c.Listen, false)},
		{"admin_listen", hostPort(c.AdminListen, true)},
		{"allow_private_ranges", prefixes(c.AllowPrivateRanges)},
		{"robots.connect_timeout", positive(c.Robots.ConnectTimeout)},
		{"robots.timeout", positive(c.Robots.Timeout)},
		{"robots.max_bytes", atLeast(c.Robots.MaxBytes, 500<<10, "RFC 9309 2.5: the parsing limit MUST be at least 500 KiB")},
		{"robots.too_many_requests", oneOf(c.Robots.TooManyRequests, "unreachable", "unavailable")},
		{"cache.max_entries", atLeast(c.Cache.MaxEntries, 1, "")},
		{"cache.max_bytes", atLeast(c.Cache.MaxBytes, 1<<20, "")},
		{"cache.max_ttl", between(c.Cache.MaxTTL, time.Second, 24*time.Hour, "RFC 9309 2.4: SHOULD NOT use a cached copy for more than 24 hours")},
		{"cache.min_ttl", between(c.Cache.MinTTL, 0, c.Cache.MaxTTL, "it must not exceed cache.max_ttl")},
		{"cache.unreachable_retry", positive(c.Cache.UnreachableRetry)},
		{"cache.stale_for", nonNegative(c.Cache.StaleFor)},
		{"upstream.connect_timeout", positive(c.Upstream.ConnectTimeout)},
		{"upstream.response_header_timeout", positive(c.Upstream.ResponseHeaderTimeout)},
		{"upstream.max_idle_conns", atLeast(c.Upstream.MaxIdleConns, 1, "")},
		{"upstream.max_idle_conns_per_host", atLeast(c.Upstream.MaxIdleConnsPerHost, 1, "")},
		{"upstream.idle_timeout", positive(c.Upstream.IdleTimeout)},
		{"shutdown_timeout", nonNegative(c.ShutdownTimeout)},
		{"log.max_size_mb", atLeast(c.Log.MaxSizeMB, 0, "")},
		{"log.max_backups", atLeast(c.Log.MaxBackups, 0, "")},
		{"log.max_age_days", atLeast(c.Log.MaxAgeDays, 0, "")},
		{"audit.archive_max_mb", atLeast(c.Audit.ArchiveMaxMB, 1, "")},
		{"log.max_field_bytes", intBetween(c.Log.MaxFieldBytes, 64, 4096, "an audit line stays under 64 KiB")},
		{"client.max_connections", atLeast(c.Client.MaxConnections, 0, "")},
		{"client.max_request_target_bytes", atLeast(c.Client.MaxRequestTargetBytes, 256, "")},
		{"client.max_header_bytes", atLeast(c.Client.MaxHeaderBytes, 1024, "")},
		{"client.read_header_timeout", positive(c.Client.ReadHeaderTimeout)},
		{"client.body_idle_timeout", positive(c.Client.BodyIdleTimeout)},
		{"client.body_min_rate", atLeast(c.Client.BodyMinRate, 0, "")},
		{"client.idle_timeout", positive(c.Client.IdleTimeout)},
		{"identity.auth_throttle.failures_per_minute", nonNegativeFloat(c.Identity.AuthThrottle.FailuresPerMinute)},
		{"identity.auth_throttle.burst", atLeast(c.Identity.AuthThrottle.Burst, 1, "")},
		{"identity.auth_throttle.max_concurrent_checks", atLeast(c.Identity.AuthThrottle.MaxConcurrentChecks, 1, "")},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return fmt.Errorf("%s: %w", ch.key, ch.err)
		}
	}
	for i, o := range c.Identity.Overrides {
		if _, err := regexp.Compile(o.UserAgent); err != nil || o.UserAgent == "" {
			return fmt.Errorf("identity.overrides[%d].user_agent: invalid regular expression %q: %v", i, o.UserAgent, err)
		}
		if !identity.IsProductToken(o.Token) {
			return fmt.Errorf("identity.overrides[%d].token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", i, o.Token)
		}
	}
	if err := c.validateAccess(); err != nil {
		return err
	}
	if err := c.validatePoliteness(); err != nil { // issue 11
		return err
	}
	if err := c.validateShared(); err != nil { // issue 12
		return err
	}
	return c.validateExposure()
}

// PrivateRanges returns AllowPrivateRanges parsed; call after Validate.
func (c *Config) PrivateRanges() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.AllowPrivateRanges {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func hostPort(s string, emptyOK bool) error {
	if s == "" && emptyOK {
		return nil
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("want HOST:PORT, got %q: %v", s, err)
	}
	return nil
}

func prefixes(list []string) error {
	for i, s := range list {
		if _, err := netip.ParsePrefix(s); err != nil {
			return fmt.Errorf("[%d]: want a CIDR range such as 10.0.0.0/8, got %q", i, s)
		}
	}
	return nil
}

func positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("must be a positive duration such as 5s, got %v", d)
	}
	return nil
}

func nonNegative(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("must not be negative, got %v", d)
	}
	return nil
}

func nonNegativeFloat(f float64) error {
	if !(f >= 0) || math.IsInf(f, 0) {
		return fmt.Errorf("must be a non-negative number, got %v", f)
	}
	return nil
}

func between(d, lo, hi time.Duration, why string) error {
	if d < lo || d > hi {
		return fmt.Errorf("must be between %v and %v, got %v (%s)", lo, hi, d, why)
	}
	return nil
}

func intBetween(n, lo, hi int, why string) error {
	if n < lo || n > hi {
		return fmt.Errorf("must be between %d and %d, got %d (%s)", lo, hi, n, why)
	}
	return nil
}

func atLeast(n, min int, why string) error {
	if n < min {
		if why != "" {
			return fmt.Errorf("must be at least %d, got %d (%s)", min, n, why)
		}
		return fmt.Errorf("must be at least %d, got %d", min, n)
	}
	return nil
}

func oneOf(s string, allowed ...string) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return fmt.Errorf("must be one of %s, got %q", strings.Join(allowed, ", "), s)
}
