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
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/internal/suggest"
	"github.com/robotsproxy/robotsproxy/robots"
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

// typeErrorRE reads one of yaml.TypeError's messages.
var typeErrorRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// nameKeys rewrites a YAML decoding error so that each problem names the
// dotted path of its key, "KEY (line N): ...", and says what to write
// instead: the closest known key for an unknown one, the accepted form
// with an example for a value of the wrong type.
func nameKeys(raw []byte, err error) error {
	keys := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(raw, &root) == nil {
		walkKeys(&root, "", keys)
	} else {
		keysByText(raw, keys) // a syntax error: no tree, read the key off the line
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			m := typeErrorRE.FindStringSubmatch(e)
			if m == nil {
				msgs = append(msgs, e)
				continue
			}
			n, _ := strconv.Atoi(m[1])
			key, ok := keys[n]
			if !ok {
				msgs = append(msgs, e)
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s (line %d): %s", key, n, explain(key, m[2])))
		}
		return errors.New(strings.Join(msgs, "\n"))
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

var (
	unknownFieldRE = regexp.MustCompile("^field (\\S+) not found in type ")
	wrongTypeRE    = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// explain turns one of yaml's messages about key into one that says what
// is accepted.
func explain(key, msg string) string {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		parent := ""
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			parent = key[:i]
		}
		known := knownKeys(parent)
		if near := closest(m[1], known); near != "" {
			return fmt.Sprintf("unknown key %q; did you mean %s?", m[1], joinKey(parent, near))
		}
		where := parent
		if where == "" {
			where = "the top level"
		}
		return fmt.Sprintf("unknown key %q; the keys of %s are %s", m[1], where, strings.Join(known, ", "))
	}
	m := wrongTypeRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, into := m[2], m[3]
	last := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case into == "time.Duration":
		return fmt.Sprintf("%q is not a duration: want a number with a unit, ns, us, ms, s, m or h, such as 500ms, 30s, 5m or 1h30m (a day is 24h)", value)
	case strings.HasPrefix(into, "int") && strings.HasSuffix(last, "_bytes"):
		return fmt.Sprintf("%q is not a size: want a whole number of bytes without a unit, such as 1048576 for 1 MiB", value)
	case strings.HasPrefix(into, "int") && strings.HasSuffix(last, "_mb"):
		return fmt.Sprintf("%q is not a size: want a whole number of MiB without a unit, such as 100", value)
	case strings.HasPrefix(into, "int"):
		return fmt.Sprintf("%q is not a whole number: want one such as 100", value)
	case strings.HasPrefix(into, "float"):
		return fmt.Sprintf("%q is not a number: want one such as 0.5 or 10", value)
	case into == "bool":
		return fmt.Sprintf("%q is not a boolean: want true or false", value)
	case strings.HasPrefix(into, "[]"):
		return fmt.Sprintf("%q is not a list: want [a, b] or one \"- item\" per line", value)
	case strings.HasPrefix(into, "config.") || strings.HasPrefix(into, "rules.") || strings.HasPrefix(into, "map["):
		return fmt.Sprintf("%q is not a section: want the keys of %s indented below it", value, key)
	}
	return msg
}

func joinKey(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// knownKeys returns the keys of the configuration section at the dotted
// path (list indexes such as "[0]" allowed), sorted; nil when the path
// names no section.
func knownKeys(path string) []string {
	t := reflect.TypeOf(Config{})
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			continue
		}
		if i := strings.IndexByte(seg, '['); i >= 0 {
			seg = seg[:i]
		}
		f, ok := fieldByKey(t, seg)
		if !ok {
			return nil
		}
		t = f.Type
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// yamlName is the key of a struct field, "" for one that YAML skips.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// closest returns the known key nearest to key by edit distance, when it
// is near enough to be a typo (at most a third of its length, at least 2).
func closest(key string, known []string) string {
	best, bestD := "", max(2, len(key)/3)+1
	for _, k := range known {
		if d := suggest.Distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
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
		{"mode", oneOf(c.Mode, string(rules.ModeEnforce), string(rules.ModeReport))},
		{"listen", hostPort(c.Listen, false)},
		{"admin_listen", hostPort(c.AdminListen, true)},
		{"allow_private_ranges", prefixes(c.AllowPrivateRanges)},
		{"robots.connect_timeout", positive(c.Robots.ConnectTimeout)},
		{"robots.timeout", positive(c.Robots.Timeout)},
		{"robots.max_bytes", atLeast(c.Robots.MaxBytes, robots.MinMaxBytes, "RFC 9309 2.5: the parsing limit MUST be at least 500 KiB")},
		{"robots.too_many_requests", oneOf(c.Robots.TooManyRequests, "unreachable", "unavailable")},
		{"cache.max_entries", atLeast(c.Cache.MaxEntries, 1, "")},
		{"cache.max_bytes", atLeast(c.Cache.MaxBytes, 1<<20, "")},
		{"cache.max_ttl", between(c.Cache.MaxTTL, time.Second, rules.MaxCacheTTL, "RFC 9309 2.4: SHOULD NOT use a cached copy for more than 24 hours")},
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
		{"client.h2_max_concurrent_streams", atLeast(c.Client.H2MaxConcurrentStreams, 1, "")},
		{"client.h2_max_resets_per_second", atLeast(c.Client.H2MaxResetsPerSecond, 1, "")},
		{"identity.auth_throttle.failures_per_minute", nonNegativeFloat(c.Identity.AuthThrottle.FailuresPerMinute)},
		{"identity.auth_throttle.burst", atLeast(c.Identity.AuthThrottle.Burst, 1, "")},
		{"identity.auth_throttle.max_concurrent_checks", atLeast(c.Identity.AuthThrottle.MaxConcurrentChecks, 1, "")},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return keyError(ch.key, ch.err)
		}
	}
	for i, o := range c.Identity.Overrides {
		if _, err := regexp.Compile(o.UserAgent); err != nil || o.UserAgent == "" {
			return fmt.Errorf("identity.overrides[%d].user_agent: invalid regular expression %q: %v", i, o.UserAgent, err)
		}
		if !robots.IsProductToken(o.Token) {
			return fmt.Errorf("identity.overrides[%d].token: %q is not a product token (letters, \"_\" and \"-\", RFC 9309 2.2.1)", i, o.Token)
		}
	}
	if err := c.validateAccess(); err != nil {
		return err
	}
	if err := c.validatePoliteness(); err != nil {
		return err
	}
	if err := c.validateShared(); err != nil {
		return err
	}
	if err := c.validatePayments(); err != nil {
		return err
	}
	if err := c.validateAudit(); err != nil {
		return err
	}
	if err := c.validateSigning(); err != nil {
		return err
	}
	if err := c.validateLive(); err != nil {
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
	return &choiceError{got: s, allowed: allowed}
}

// choiceError is a value that is not one of the allowed words.
type choiceError struct {
	got     string
	allowed []string
}

func (e *choiceError) Error() string {
	return fmt.Sprintf("must be one of %s, got %q", strings.Join(e.allowed, ", "), e.got)
}

// keyError prefixes err with its key, and shows a choice's accepted form
// as the line to write: `mode: must be one of enforce, report, got "x"
// (for example "mode: enforce")`.
func keyError(key string, err error) error {
	var ce *choiceError
	if errors.As(err, &ce) {
		last := key[strings.LastIndexByte(key, '.')+1:]
		return fmt.Errorf("%s: %w (for example \"%s: %s\")", key, err, last, ce.allowed[0])
	}
	return fmt.Errorf("%s: %w", key, err)
}
