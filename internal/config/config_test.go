package config_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/server"
	"github.com/robotsproxy/robotsproxy/policy"
)

// shippedConfig is the commented configuration file at the repository root.
var shippedConfig = filepath.Join("..", "..", "config.yaml")

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
allow_open_proxy: true
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
	want.AllowOpenProxy = true
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
		{"cache max_bytes under 1 MiB", "cache:\n  max_bytes: 1000\n", []string{"cache.max_bytes"}},
		{"upstream max_idle_conns", "upstream:\n  max_idle_conns: -1\n", []string{"upstream.max_idle_conns"}},
		{"upstream max_idle_conns_per_host", "upstream:\n  max_idle_conns_per_host: -1\n", []string{"upstream.max_idle_conns_per_host"}},
		{"upstream idle_timeout", "upstream:\n  idle_timeout: -1s\n", []string{"upstream.idle_timeout"}},
		{"shutdown_timeout", "shutdown_timeout: -1s\n", []string{"shutdown_timeout"}},
		{"log max_size_mb", "log:\n  max_size_mb: -1\n", []string{"log.max_size_mb"}},
		{"log max_backups", "log:\n  max_backups: -1\n", []string{"log.max_backups"}},
		{"audit archive_max_mb", "audit:\n  archive_max_mb: 0\n", []string{"audit.archive_max_mb"}},
		{"audit on_write_error", "audit:\n  on_write_error: drop\n", []string{"audit.on_write_error", "refuse"}},
		{"checkpoint_file without log.file", "audit:\n  checkpoint_file: /var/cp\n", []string{"audit.checkpoint_file", "log.file"}},
		{"checkpoint_file without chain", "log:\n  file: /var/a.log\naudit:\n  chain: false\n  checkpoint_file: /var/cp\n", []string{"audit.checkpoint_file", "audit.chain"}},
		{"checkpoint_file is log.file", "log:\n  file: /var/a.log\naudit:\n  checkpoint_file: /var/a.log\n", []string{"audit.checkpoint_file", "log.file"}},
		{"checkpoint_every_lines zero", "audit:\n  checkpoint_every_lines: 0\n", []string{"audit.checkpoint_every_lines"}},
		{"checkpoint_every zero", "audit:\n  checkpoint_every: 0s\n", []string{"audit.checkpoint_every"}},
		{"checkpoint key without file", "audit:\n  checkpoint_hmac_key_file: /k\n", []string{"audit.checkpoint_hmac_key_file", "audit.checkpoint_file"}},
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

// testHash returns a bcrypt hash of password at the lowest cost, for speed.
func testHash(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// TestLoadAccessErrorsNameTheKey covers the keys of pinned identities,
// destination host lists, CONNECT and interception: every error names the
// offending key, with its index in a list.
func TestLoadAccessErrorsNameTheKey(t *testing.T) {
	h := testHash(t, "pw")
	user := func(name, hash, token string) string {
		return fmt.Sprintf("    - name: %q\n      password_bcrypt: %q\n      token: %q\n", name, hash, token)
	}
	users := func(list ...string) string { return "identity:\n  users:\n" + strings.Join(list, "") }
	rng := func(cidr, token string) string { return fmt.Sprintf("    - cidr: %q\n      token: %q\n", cidr, token) }
	ranges := func(list ...string) string { return "identity:\n  client_ranges:\n" + strings.Join(list, "") }
	tests := []struct {
		name string
		in   string
		want []string // every one must appear in the error
	}{
		// identity.users
		{"user without name", users(user("", h, "Bot")), []string{"identity.users[0].name"}},
		{"user name with colon", users(user("a", h, "A"), user("b:c", h, "B")), []string{"identity.users[1].name", `"b:c"`}},
		{"duplicate user", users(user("a", h, "A"), user("b", h, "B"), user("a", h, "C")), []string{"identity.users[2].name", "duplicate", `"a"`}},
		{"user token with digit", users(user("a", h, "Bot2")), []string{"identity.users[0].token", "Bot2"}},
		{"user token with slash", users(user("a", h, "A"), user("b", h, "Bot/1.0")), []string{"identity.users[1].token", "Bot/1.0"}},
		{"user without token", users(user("a", h, "")), []string{"identity.users[0].token"}},
		{"plain-text password", users(user("a", h, "A"), user("b", "hunter2", "B")), []string{"identity.users[1].password_bcrypt", "hash-password"}},
		{"empty password hash", users(user("a", "", "A")), []string{"identity.users[0].password_bcrypt"}},
		{"truncated hash", users(user("a", h[:30], "A")), []string{"identity.users[0].password_bcrypt"}},
		{"hash not bcrypt", users(user("a", "$6$salt$0123456789abcdef0123456789abcdef0123456789abcdef0123", "A")), []string{"identity.users[0].password_bcrypt"}},
		{"password key misspelt", "identity:\n  users:\n    - name: a\n      password: pw\n      token: A\n", []string{"identity.users[0].password"}},
		{"users not a list", "identity:\n  users: alice\n", []string{"identity.users"}},
		// identity.client_ranges
		{"range bad CIDR", ranges(rng("10.0.0.0/8", "A"), rng("10.0.0.0/33", "B")), []string{"identity.client_ranges[1].cidr", "10.0.0.0/33"}},
		{"range is an address", ranges(rng("10.1.2.3", "A")), []string{"identity.client_ranges[0].cidr", "10.1.2.3"}},
		{"range is a name", ranges(rng("example.com", "A")), []string{"identity.client_ranges[0].cidr"}},
		{"range empty CIDR", ranges(rng("", "A")), []string{"identity.client_ranges[0].cidr"}},
		{"range bad IPv6 CIDR", ranges(rng("2001:db8::/129", "A")), []string{"identity.client_ranges[0].cidr"}},
		{"range bad token", ranges(rng("10.0.0.0/8", "A"), rng("fd00::/8", "Bot-1.0")), []string{"identity.client_ranges[1].token", "Bot-1.0"}},
		{"range without token", ranges(rng("10.0.0.0/8", "")), []string{"identity.client_ranges[0].token"}},
		{"range key misspelt", "identity:\n  client_ranges:\n    - cdir: 10.0.0.0/8\n      token: A\n", []string{"identity.client_ranges[0].cdir"}},
		// identity.require_credentials
		{"require_credentials alone", "identity:\n  require_credentials: true\n", []string{"identity.require_credentials"}},
		{"require_credentials not a bool", "identity:\n  require_credentials: maybe\n", []string{"identity.require_credentials"}},
		// Host lists.
		{"allow_hosts URL", "allow_hosts: [example.com, \"http://example.org\"]\n", []string{"allow_hosts[1]", "http://example.org"}},
		{"allow_hosts path", "allow_hosts: [example.com/x]\n", []string{"allow_hosts[0]"}},
		{"allow_hosts with port", "allow_hosts: [\"example.com:8080\"]\n", []string{"allow_hosts[0]", "example.com:8080"}},
		{"allow_hosts empty", "allow_hosts: [\"\"]\n", []string{"allow_hosts[0]"}},
		{"allow_hosts space", "allow_hosts: [\"exa mple.com\"]\n", []string{"allow_hosts[0]"}},
		{"deny_hosts dot only", "deny_hosts: [a.test, b.test, \".\"]\n", []string{"deny_hosts[2]"}},
		{"deny_hosts with port", "deny_hosts: [\"example.com:443\"]\n", []string{"deny_hosts[0]"}},
		{"deny_hosts not a list", "deny_hosts: example.com\n", []string{"deny_hosts"}},
		{"exempt_hosts URL", "exempt_hosts: [\"https://example.com/\"]\n", []string{"exempt_hosts[0]"}},
		// connect
		{"connect.ports empty", "connect:\n  ports: []\n", []string{"connect.ports", "connect.refuse"}},
		{"connect.ports zero", "connect:\n  ports: [443, 0]\n", []string{"connect.ports[1]", "0"}},
		{"connect.ports negative", "connect:\n  ports: [-443]\n", []string{"connect.ports[0]"}},
		{"connect.ports too large", "connect:\n  ports: [443, 8443, 65536]\n", []string{"connect.ports[2]", "65536"}},
		{"connect.ports not a list", "connect:\n  ports: 443\n", []string{"connect.ports"}},
		{"connect.ports not numbers", "connect:\n  ports: [https]\n", []string{"connect.ports"}},
		{"connect.refuse not a bool", "connect:\n  refuse: sometimes\n", []string{"connect.refuse"}},
		{"connect.require_identity not a bool", "connect:\n  require_identity: yes please\n", []string{"connect.require_identity"}},
		{"connect unknown key", "connect:\n  port: [443]\n", []string{"connect.port"}},
		// mitm
		{"mitm.ca_cert without ca_key", "mitm:\n  ca_cert: ca.pem\n", []string{"mitm", "mitm.ca_key"}},
		{"mitm.ca_key without ca_cert", "mitm:\n  ca_key: key.pem\n", []string{"mitm", "mitm.ca_cert"}},
		{"mitm.max_certs zero", "mitm:\n  max_certs: 0\n", []string{"mitm.max_certs"}},
		{"mitm.max_certs negative", "mitm:\n  ca_cert: a\n  ca_key: b\n  max_certs: -1\n", []string{"mitm.max_certs"}},
		{"mitm.max_certs not a number", "mitm:\n  max_certs: many\n", []string{"mitm.max_certs"}},
		{"mitm unknown key", "mitm:\n  ca_crt: ca.pem\n", []string{"mitm.ca_crt"}},
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

// TestLoadAccessValid checks forms of the new keys that must load.
func TestLoadAccessValid(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(config.Config) bool
	}{
		{"connect.refuse with no ports", "connect:\n  refuse: true\n  ports: []\n",
			func(c config.Config) bool { return c.Connect.Refuse && len(c.Connect.Ports) == 0 }},
		{"connect.require_identity", "connect:\n  require_identity: true\n",
			func(c config.Config) bool { return c.Connect.RequireIdentity && !c.Connect.Refuse }},
		{"connect.ports bounds", "connect:\n  ports: [1, 65535]\n",
			func(c config.Config) bool { return slices.Equal(c.Connect.Ports, []int{1, 65535}) }},
		{"mitm both set", "mitm:\n  ca_cert: ca.pem\n  ca_key: key.pem\n  max_certs: 1\n",
			func(c config.Config) bool {
				return c.MITM == config.MITM{Mode: config.MITMIntercept, CACert: "ca.pem", CAKey: "key.pem", MaxCerts: 1}
			}},
		{"require_credentials with a range only", "identity:\n  require_credentials: true\n  client_ranges:\n    - cidr: 10.0.0.0/8\n      token: A\n",
			func(c config.Config) bool { return c.Identity.RequireCredentials && len(c.Identity.ClientRanges) == 1 }},
		{"host forms", "allow_hosts: [example.com, .example.org, bücher.example, \"::1\", \"[2001:db8::1]\", 192.0.2.1, a_b.example]\ndeny_hosts: [.EXAMPLE.net]\nexempt_hosts: [\"[::1]\"]\n",
			func(c config.Config) bool {
				return len(c.AllowHosts) == 7 && slices.Equal(c.DenyHosts, []string{".EXAMPLE.net"}) && slices.Equal(c.ExemptHosts, []string{"[::1]"})
			}},
		{"unmasked client range", "identity:\n  client_ranges:\n    - cidr: 10.1.2.3/16\n      token: A\n",
			func(c config.Config) bool { return len(server.PinOptions(c).Ranges) == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.in, err)
			}
			if !tt.check(cfg) {
				t.Errorf("Load(%q): got %+v", tt.in, cfg)
			}
		})
	}
}

// TestLoadAccessFull loads a configuration using every new key and checks
// the result, PinOptions and that the options make a working Pinner.
func TestLoadAccessFull(t *testing.T) {
	alice, bob := testHash(t, "alice-pw"), testHash(t, "bob-pw")
	in := fmt.Sprintf(`allow_hosts: [.example.com, bücher.example]
deny_hosts: [secret.example.com]
connect:
  refuse: false
  ports: [443, 8443]
mitm:
  ca_cert: /etc/robotsproxy/ca.pem
  ca_key: /etc/robotsproxy/ca-key.pem
  max_certs: 64
identity:
  require_credentials: true
  users:
    - name: alice
      password_bcrypt: %q
      token: AliceBot
    - name: bob smith
      password_bcrypt: '%s'
      token: Bob_Bot
  client_ranges:
    - cidr: 10.0.0.0/8
      token: WideBot
    - cidr: 10.1.0.0/16
      token: NarrowBot
    - cidr: "2001:db8::/32"
      token: SixBot
`, alice, bob)
	got, err := config.Load(strings.NewReader(in))
	if err != nil {
		t.Fatalf("Load: %v\ninput:\n%s", err, in)
	}
	want := config.Default()
	want.AllowHosts = []string{".example.com", "bücher.example"}
	want.DenyHosts = []string{"secret.example.com"}
	want.Connect = config.Connect{Ports: []int{443, 8443}}
	want.MITM = config.MITM{Mode: config.MITMIntercept, CACert: "/etc/robotsproxy/ca.pem", CAKey: "/etc/robotsproxy/ca-key.pem", MaxCerts: 64}
	want.Identity.RequireCredentials = true
	want.Identity.Users = []config.UserRule{{Name: "alice", PasswordBcrypt: alice, Token: "AliceBot"}, {Name: "bob smith", PasswordBcrypt: bob, Token: "Bob_Bot"}}
	want.Identity.ClientRanges = []config.ClientRangeRule{{CIDR: "10.0.0.0/8", Token: "WideBot"}, {CIDR: "10.1.0.0/16", Token: "NarrowBot"}, {CIDR: "2001:db8::/32", Token: "SixBot"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load:\ngot  %+v\nwant %+v", got, want)
	}

	o := server.PinOptions(got)
	wantOpts := identity.PinOptions{
		Users: []identity.User{
			{Name: "alice", PasswordHash: []byte(alice), Token: "AliceBot"},
			{Name: "bob smith", PasswordHash: []byte(bob), Token: "Bob_Bot"},
		},
		Ranges: []identity.ClientRange{
			{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Token: "WideBot"},
			{Prefix: netip.MustParsePrefix("10.1.0.0/16"), Token: "NarrowBot"},
			{Prefix: netip.MustParsePrefix("2001:db8::/32"), Token: "SixBot"},
		},
		Required: true,
		Throttle: identity.ThrottleOptions{FailuresPerMinute: 10, Burst: 5, MaxConcurrentChecks: 2},
	}
	if !reflect.DeepEqual(o, wantOpts) {
		t.Fatalf("PinOptions():\ngot  %+v\nwant %+v", o, wantOpts)
	}

	pinner, err := identity.NewPinner(o)
	if err != nil {
		t.Fatalf("NewPinner(PinOptions()): %v", err)
	}
	auth := func(user, pw string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	}
	for _, c := range []struct {
		header, client string
		token          string
		err            error
	}{
		{auth("bob smith", "bob-pw"), "192.0.2.1", "Bob_Bot", nil},
		{auth("alice", "alice-pw"), "10.1.0.1", "AliceBot", nil},
		{auth("alice", "bob-pw"), "10.1.0.1", "", policy.ErrProxyAuthFailed},
		{"", "10.1.0.1", "NarrowBot", nil},
		{"", "10.2.0.1", "WideBot", nil},
		{"", "2001:db8::5", "SixBot", nil},
		{"", "192.0.2.1", "", policy.ErrProxyAuthRequired},
	} {
		pin, err := pinner.Pin(t.Context(), c.header, netip.MustParseAddr(c.client))
		if pin.Token != c.token || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("Pin(%q, %s): got %+v, %v, want Token %q error %v", c.header, c.client, pin, err, c.token, c.err)
		}
	}
}

func TestPinOptions(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		c := config.Default()
		o := server.PinOptions(c)
		if len(o.Users) != 0 || len(o.Ranges) != 0 || o.Required {
			t.Errorf("PinOptions(Default()): got %+v, want nothing pinned", o)
		}
		p, err := identity.NewPinner(o)
		if err != nil || p.Enabled() {
			t.Errorf("NewPinner(PinOptions(Default())): got %v (Enabled %v), want a disabled Pinner", err, p.Enabled())
		}
	})
	t.Run("conversion", func(t *testing.T) {
		c := config.Default()
		c.Identity.Users = []config.UserRule{{Name: "u", PasswordBcrypt: "$2a$04$x", Token: "T"}}
		c.Identity.ClientRanges = []config.ClientRangeRule{{CIDR: "fd00::/8", Token: "V"}, {CIDR: "192.0.2.7/24", Token: "W"}}
		c.Identity.RequireCredentials = true
		c.Identity.AuthThrottle = config.AuthThrottle{FailuresPerMinute: 2.5, Burst: 7, MaxConcurrentChecks: 3}
		o := server.PinOptions(c)
		want := identity.PinOptions{
			Users:    []identity.User{{Name: "u", PasswordHash: []byte("$2a$04$x"), Token: "T"}},
			Ranges:   []identity.ClientRange{{Prefix: netip.MustParsePrefix("fd00::/8"), Token: "V"}, {Prefix: netip.MustParsePrefix("192.0.2.7/24"), Token: "W"}},
			Required: true,
			Throttle: identity.ThrottleOptions{FailuresPerMinute: 2.5, Burst: 7, MaxConcurrentChecks: 3},
		}
		if !reflect.DeepEqual(o, want) {
			t.Errorf("PinOptions():\ngot  %+v\nwant %+v", o, want)
		}
	})
}

// TestValidateAccess calls Validate directly, as serve does after applying
// flags, on configurations that Load never sees.
func TestValidateAccess(t *testing.T) {
	h := testHash(t, "pw")
	tests := []struct {
		name   string
		change func(*config.Config)
		want   string // "" means valid
	}{
		{"default", func(*config.Config) {}, ""},
		{"only -ca-cert", func(c *config.Config) { c.MITM.CACert = "ca.pem" }, "mitm"},
		{"only -ca-key", func(c *config.Config) { c.MITM.CAKey = "key.pem" }, "mitm"},
		{"both", func(c *config.Config) { c.MITM.CACert, c.MITM.CAKey = "ca.pem", "key.pem" }, ""},
		{"mitm.mode host-level", func(c *config.Config) { c.MITM.Mode = "host-level" }, ""},
		{"mitm.mode unknown", func(c *config.Config) { c.MITM.Mode = "tunnel" }, "mitm.mode"},
		{"mitm.mode empty", func(c *config.Config) { c.MITM.Mode = "" }, "mitm.mode"},
		{"host-level with a CA", func(c *config.Config) {
			c.MITM.Mode, c.MITM.CACert, c.MITM.CAKey = "host-level", "ca.pem", "key.pem"
		}, "mitm.mode"},
		{"nil ports", func(c *config.Config) { c.Connect.Ports = nil }, "connect.ports"},
		{"nil ports, refused", func(c *config.Config) { c.Connect.Ports, c.Connect.Refuse = nil, true }, ""},
		{"bad port, refused", func(c *config.Config) { c.Connect.Ports, c.Connect.Refuse = []int{0}, true }, "connect.ports[0]"},
		{"required, nothing", func(c *config.Config) { c.Identity.RequireCredentials = true }, "identity.require_credentials"},
		{"required, a user", func(c *config.Config) {
			c.Identity.RequireCredentials = true
			c.Identity.Users = []config.UserRule{{Name: "u", PasswordBcrypt: h, Token: "T"}}
		}, ""},
		{"required, nil lists", func(c *config.Config) {
			c.Identity.RequireCredentials = true
			c.Identity.Users, c.Identity.ClientRanges = nil, nil
		}, "identity.require_credentials"},
		{"first bad user named", func(c *config.Config) {
			c.Identity.Users = []config.UserRule{{Name: "u", PasswordBcrypt: h, Token: "T"}, {Name: "v", PasswordBcrypt: "x", Token: "T"}, {Name: "", PasswordBcrypt: h, Token: "T"}}
		}, "identity.users[1].password_bcrypt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			tt.change(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate(): got %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate(): got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestPasswordNotEchoed checks that a rejected password_bcrypt value,
// which may be a password pasted by mistake, is not echoed in the error.
func TestPasswordNotEchoed(t *testing.T) {
	in := "identity:\n  users:\n    - name: a\n      password_bcrypt: \"MyRealPassword123\"\n      token: A\n"
	_, err := config.Load(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "identity.users[0].password_bcrypt") {
		t.Fatalf("Load: got %v, want an error naming identity.users[0].password_bcrypt", err)
	}
	if strings.Contains(err.Error(), "MyRealPassword123") {
		t.Errorf("Load: got error %q, which echoes the password_bcrypt value", err)
	}
}
