package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/config"
)

// shippedConfig is the commented configuration file at the repository root.
var shippedConfig = filepath.Join("..", "config.yaml")

func TestLoadShippedConfigIsDefault(t *testing.T) {
	got, err := config.LoadFile(shippedConfig)
	if err != nil {
		t.Fatalf("LoadFile(%s): %v", shippedConfig, err)
	}
	if want := config.Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("LoadFile(%s):\ngot  %#v\nwant %#v (Default())", shippedConfig, got, want)
	}
}

// TestShippedConfigSetsEveryKey decodes config.yaml over a zero Config
// rather than over Default(), so a key missing from the file shows up as a
// zero value that differs from its default.
func TestShippedConfigSetsEveryKey(t *testing.T) {
	raw, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	var got config.Config
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode %s: %v", shippedConfig, err)
	}
	if want := config.Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s decoded over a zero Config:\ngot  %#v\nwant %#v (Default()): a key is missing or has a value other than its default", shippedConfig, got, want)
	}

	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	collectKeys(&root, "", inFile)
	for _, key := range structKeys(reflect.TypeOf(config.Config{}), "") {
		if !inFile[key] {
			t.Errorf("%s: key %q is missing; want every key shown with its default", shippedConfig, key)
		}
	}
}

// structKeys returns the dotted YAML keys of every field of t, nested
// structs included (but not the fields of list elements).
func structKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		if prefix != "" {
			name = prefix + "." + name
		}
		keys = append(keys, name)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			keys = append(keys, structKeys(f.Type, name)...)
		}
	}
	return keys
}

// collectKeys records the dotted path of every mapping key under n.
func collectKeys(n *yaml.Node, prefix string, keys map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, prefix, keys)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			path := n.Content[i].Value
			if prefix != "" {
				path = prefix + "." + path
			}
			keys[path] = true
			collectKeys(n.Content[i+1], path, keys)
		}
	}
}

func TestLoadEmptyIsDefault(t *testing.T) {
	for name, in := range map[string]string{"empty": "", "newline": "\n", "comment": "# only a comment\n", "document marker": "---\n"} {
		t.Run(name, func(t *testing.T) {
			got, err := config.Load(strings.NewReader(in))
			if err != nil {
				t.Fatalf("Load(%q): got error %v, want Default()", in, err)
			}
			if want := config.Default(); !reflect.DeepEqual(got, want) {
				t.Errorf("Load(%q):\ngot  %+v\nwant %+v", in, got, want)
			}
		})
	}
}

func TestLoadOverridesOnlyGivenKeys(t *testing.T) {
	in := `listen: "0.0.0.0:3128"
admin_listen: ""
allow_private: true
allow_private_ranges: ["10.20.0.0/16", "fd00::/8"]
exempt_hosts: [".example.com"]
identity:
  overrides:
    - user_agent: "^python-requests/"
      token: My_Crawler
cache:
  max_ttl: 1h
  min_ttl: 0s
robots:
  too_many_requests: unavailable
  max_bytes: 512000
`
	got, err := config.Load(strings.NewReader(in))
	if err != nil {
		t.Fatalf("Load: %v\ninput:\n%s", err, in)
	}
	want := config.Default()
	want.Listen = "0.0.0.0:3128"
	want.AdminListen = ""
	want.AllowPrivate = true
	want.AllowPrivateRanges = []string{"10.20.0.0/16", "fd00::/8"}
	want.ExemptHosts = []string{".example.com"}
	want.Identity.Overrides = []config.OverrideRule{{UserAgent: "^python-requests/", Token: "My_Crawler"}}
	want.Cache.MaxTTL = time.Hour
	want.Cache.MinTTL = 0
	want.Robots.TooManyRequests = "unavailable"
	want.Robots.MaxBytes = 512000
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(%q):\ngot  %+v\nwant %+v", in, got, want)
	}
	if n := len(got.PrivateRanges()); n != 2 {
		t.Errorf("PrivateRanges() of %q: got %d ranges, want 2", got.AllowPrivateRanges, n)
	}
}

func TestLoadErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // every one must appear in the error
	}{
		{"unknown top-level key", "listn: 127.0.0.1:1\n", []string{"listn"}},
		{"unknown nested key", "robots:\n  timeoutt: 5s\n", []string{"robots.timeoutt", "line 2"}},
		{"unknown key in a list element", "identity:\n  overrides:\n    - user_agent: x\n      tokn: X\n", []string{"identity.overrides[0].tokn"}},
		{"wrong type int", "cache:\n  max_entries: lots\n", []string{"cache.max_entries"}},
		{"wrong type duration", "robots:\n  timeout: soon\n", []string{"robots.timeout"}},
		{"wrong type bool", "allow_private: maybe\n", []string{"allow_private"}},
		{"wrong type list", "exempt_hosts: example.com\n", []string{"exempt_hosts"}},
		{"wrong type section", "cache: 5\n", []string{"cache"}},
		{"listen without port", "listen: localhost\n", []string{"listen"}},
		{"admin_listen without port", "admin_listen: localhost\n", []string{"admin_listen"}},
		{"max_ttl above 24h", "cache:\n  max_ttl: 48h\n", []string{"cache.max_ttl"}},
		{"max_ttl zero", "cache:\n  max_ttl: 0s\n", []string{"cache.max_ttl"}},
		{"min_ttl above max_ttl", "cache:\n  max_ttl: 1h\n  min_ttl: 2h\n", []string{"cache.min_ttl"}},
		{"min_ttl negative", "cache:\n  min_ttl: -1s\n", []string{"cache.min_ttl"}},
		{"max_entries zero", "cache:\n  max_entries: 0\n", []string{"cache.max_entries"}},
		{"unreachable_retry zero", "cache:\n  unreachable_retry: 0s\n", []string{"cache.unreachable_retry"}},
		{"stale_for negative", "cache:\n  stale_for: -1h\n", []string{"cache.stale_for"}},
		{"max_bytes under 500 KiB", "robots:\n  max_bytes: 511999\n", []string{"robots.max_bytes"}},
		{"robots timeout zero", "robots:\n  timeout: 0s\n", []string{"robots.timeout"}},
		{"robots connect_timeout negative", "robots:\n  connect_timeout: -5s\n", []string{"robots.connect_timeout"}},
		{"too_many_requests", "robots:\n  too_many_requests: retry\n", []string{"robots.too_many_requests"}},
		{"upstream connect_timeout", "upstream:\n  connect_timeout: 0s\n", []string{"upstream.connect_timeout"}},
		{"upstream response_header_timeout", "upstream:\n  response_header_timeout: -1s\n", []string{"upstream.response_header_timeout"}},
		{"upstream max_idle_conns", "upstream:\n  max_idle_conns: -1\n", []string{"upstream.max_idle_conns"}},
		{"upstream max_idle_conns_per_host", "upstream:\n  max_idle_conns_per_host: -1\n", []string{"upstream.max_idle_conns_per_host"}},
		{"upstream idle_timeout", "upstream:\n  idle_timeout: -1s\n", []string{"upstream.idle_timeout"}},
		{"shutdown_timeout", "shutdown_timeout: -1s\n", []string{"shutdown_timeout"}},
		{"log max_size_mb", "log:\n  max_size_mb: -1\n", []string{"log.max_size_mb"}},
		{"log max_backups", "log:\n  max_backups: -1\n", []string{"log.max_backups"}},
		{"log max_age_days", "log:\n  max_age_days: -1\n", []string{"log.max_age_days"}},
		{"bad CIDR", "allow_private_ranges: [10.0.0.0/8, 10.0.0.0/33]\n", []string{"allow_private_ranges", "[1]", "10.0.0.0/33"}},
		{"address not a CIDR", "allow_private_ranges: [10.1.2.3]\n", []string{"allow_private_ranges", "10.1.2.3"}},
		{"bad regexp", "identity:\n  overrides:\n    - user_agent: \"(unclosed\"\n      token: Bot\n", []string{"identity.overrides[0].user_agent"}},
		{"empty regexp", "identity:\n  overrides:\n    - user_agent: \"\"\n      token: Bot\n", []string{"identity.overrides[0].user_agent"}},
		{"bad regexp in second override", "identity:\n  overrides:\n    - user_agent: a\n      token: A\n    - user_agent: \"[\"\n      token: B\n", []string{"identity.overrides[1].user_agent"}},
		{"token with a digit", "identity:\n  overrides:\n    - user_agent: a\n      token: Bot2\n", []string{"identity.overrides[0].token", "Bot2"}},
		{"token with a slash", "identity:\n  overrides:\n    - user_agent: a\n      token: Bot/1.0\n", []string{"identity.overrides[0].token"}},
		{"empty token", "identity:\n  overrides:\n    - user_agent: a\n", []string{"identity.overrides[0].token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Load(%q): got %+v and no error, want an error naming %q", tt.in, cfg, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q): got error %q, want it to contain %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestLoadSyntaxErrorGivesTheLine(t *testing.T) {
	in := "listen: \"127.0.0.1:8080\"\ncache:\n  max_ttl: [\n"
	_, err := config.Load(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("Load(%q): got error %v, want a YAML syntax error giving the line", in, err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	if _, err := config.LoadFile(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadFile(%s): got error %v, want one wrapping fs.ErrNotExist", missing, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("cache:\n  max_ttl: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.LoadFile(bad)
	for _, w := range []string{bad, "cache.max_ttl"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("LoadFile(%s): got error %v, want it to contain %q", bad, err, w)
		}
	}
}

func TestValidateDefault(t *testing.T) {
	cfg := config.Default()
	if err := cfg.Validate(); err != nil {
		t.Errorf("Default().Validate(): got %v, want nil", err)
	}
	if got := cfg.Robots.MaxBytes; got < 500<<10 {
		t.Errorf("Default().Robots.MaxBytes: got %d, want at least 512000 (RFC 9309 2.5)", got)
	}
	if got := cfg.Cache.MaxTTL; got > 24*time.Hour {
		t.Errorf("Default().Cache.MaxTTL: got %v, want at most 24h (RFC 9309 2.4)", got)
	}
	// Default must hand out a fresh copy: callers may change its slices.
	a := config.Default()
	a.Identity.BrowserTokens[0] = "changed"
	if b := config.Default(); slices.Contains(b.Identity.BrowserTokens, "changed") {
		t.Errorf("Default().Identity.BrowserTokens shares its backing array between calls")
	}
}
