// Package config loads and validates robotsproxy's YAML configuration.
//
// Load decodes into a Config whose defaults are set first, so a file only
// needs the keys it changes; unknown keys are errors. Every error names the
// key it is about ("cache.max_ttl (line 12): ...").
package config

import (
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Config is the whole configuration. See config.yaml for a commented copy
// with every key.
type Config struct {
	// Listen is the proxy's HOST:PORT. Default "127.0.0.1:8080".
	Listen string `yaml:"listen"`
	// AdminListen is the HOST:PORT of /healthz, /readyz, /metrics and
	// the live view (/live); "" disables the admin listener. Default
	// "127.0.0.1:9090".
	AdminListen string `yaml:"admin_listen"`
	// AllowPrivate lets the proxy and the robots.txt fetcher dial loopback,
	// private and link-local addresses. Default false.
	AllowPrivate bool `yaml:"allow_private"`
	// Mode is how robots.txt denials are acted on: "enforce" (403) or
	// "report" (forward, and audit the denial with "enforced": false).
	// Per-identity modes (identity.users[].mode,
	// identity.client_ranges[].mode) win. Default "enforce".
	Mode string `yaml:"mode"`
	// AllowOpenProxy lets the proxy listen on a non-loopback address with no
	// identity.users and no identity.client_ranges, and the admin listener
	// (/metrics) listen on a non-loopback address at all. Without it such a
	// configuration is refused at start: it is an open proxy. Default false.
	AllowOpenProxy bool `yaml:"allow_open_proxy"`
	// AllowPrivateRanges are CIDR ranges dialled even though they are not
	// public, e.g. "10.20.0.0/16". Default none.
	AllowPrivateRanges []string `yaml:"allow_private_ranges"`
	// ExemptHosts are hosts allowed without robots.txt checks (reason
	// "override"); ".example.com" covers its subdomains. Default none.
	ExemptHosts []string `yaml:"exempt_hosts"`
	// AllowHosts, when not empty, are the only destination hosts; same
	// forms as ExemptHosts. Default none (every host).
	AllowHosts []string `yaml:"allow_hosts"`
	// DenyHosts are destination hosts always refused (reason
	// "host-denied"); they win over AllowHosts. Default none.
	DenyHosts []string `yaml:"deny_hosts"`
	// Connect configures CONNECT tunnels.
	Connect Connect `yaml:"connect"`
	// MITM configures HTTPS interception.
	MITM MITM `yaml:"mitm"`
	// DataDir is the directory of the proxy's own state: the interception
	// CA it creates on first start when mitm.mode is "intercept" and no
	// mitm.ca_cert is set (ca.pem, and ca-key.pem with mode 0600; the
	// directory is created with mode 0700). Default "": DefaultDataDir,
	// $XDG_STATE_HOME/robotsproxy or ~/.local/state/robotsproxy, never the
	// working directory.
	DataDir string `yaml:"data_dir"`
	// Log configures the audit log file.
	Log Log `yaml:"log"`
	// Audit configures the audit log's evidence: the hash chain.
	Audit Audit `yaml:"audit"`
	// Identity configures product-token identification.
	Identity Identity `yaml:"identity"`
	// Robots configures robots.txt fetching and parsing.
	Robots Robots `yaml:"robots"`
	// Cache configures the robots.txt cache.
	Cache Cache `yaml:"cache"`
	// Upstream configures the connections to origins.
	Upstream Upstream `yaml:"upstream"`
	// Client bounds what one client connection may cost the proxy.
	Client Client `yaml:"client"`
	// Politeness spaces and pauses requests.
	Politeness Politeness `yaml:"politeness"`
	// Usage compares declared purposes with sites' usage preferences.
	Usage Usage `yaml:"usage"`
	// Shared is the state a fleet of replicas shares in Redis or Valkey.
	Shared Shared `yaml:"shared"`
	// Payments pays for crawls (pay per crawl) within per-identity caps.
	Payments Payments `yaml:"payments"`
	// Signing signs forwarded requests (Web Bot Auth).
	Signing Signing `yaml:"signing"`
	// Live configures the live view of decisions on the admin listener.
	Live Live `yaml:"live"`
	// ShutdownTimeout is how long a graceful shutdown waits for requests
	// in flight. Default 10s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
}

// Log configures the audit log: one JSON line per request.
type Log struct {
	// File is the audit log path; "" writes to standard output. Default "".
	File string `yaml:"file"`
	// MaxSizeMB rotates the file when it reaches this size in MiB; 0 never
	// rotates. Default 100.
	MaxSizeMB int `yaml:"max_size_mb"`
	// MaxBackups is how many rotated files are kept; 0 keeps all. Default 5.
	MaxBackups int `yaml:"max_backups"`
	// MaxAgeDays removes rotated files older than this; 0 keeps them.
	// Default 0.
	MaxAgeDays int `yaml:"max_age_days"`
	// MaxFieldBytes bounds each free-text field of an audit line (url,
	// user_agent, error, rule, ...): a longer value is cut at this many
	// octets and marked FIELD_truncated with FIELD_length, the original
	// length. Default 2048; between 64 and 4096, so that no line exceeds
	// 64 KiB.
	MaxFieldBytes int `yaml:"max_field_bytes"`
}

// Audit configures what makes the audit log evidence.
type Audit struct {
	// Chain adds "prev", the SHA-256 of the previous line, to every audit
	// line: a hash chain across files and restarts that shows any deleted,
	// edited or reordered line. Default true.
	Chain bool `yaml:"chain"`
	// ArchiveDir keeps every robots.txt body fetched (once per distinct
	// body, by SHA-256, gzip-compressed) and a record of every fetch, so
	// that "robotsproxy audit verify" can re-decide each audit line.
	// Default "": no archive.
	ArchiveDir string `yaml:"archive_dir"`
	// ArchiveMaxMB bounds the archive in MiB; past it the oldest fetch
	// records, and the bodies no record refers to any more, are removed.
	// Default 1024; at least 1.
	ArchiveMaxMB int `yaml:"archive_max_mb"`
	// OnWriteError is what happens to requests while audit lines cannot
	// be written (a full disk, an I/O error): "refuse" (default) answers
	// them 503 with reason audit-unavailable without forwarding them, and
	// cuts off a forwarded request whose line failed; "continue" answers
	// them as decided and counts the lost lines, which a lost_lines
	// marker line records in the chain once writing resumes.
	OnWriteError string `yaml:"on_write_error"`
	// CheckpointFile, when set, is a checkpoint log: the chain's head,
	// line count and time are appended to it (fsynced) every
	// CheckpointEveryLines lines or CheckpointEvery, and at shutdown, so
	// that "audit verify -checkpoints" detects a log cut short or
	// rewritten. Requires chain and log.file. Default "": off.
	CheckpointFile string `yaml:"checkpoint_file"`
	// CheckpointEveryLines is the most lines between two checkpoints.
	// Default 10000; at least 1.
	CheckpointEveryLines int `yaml:"checkpoint_every_lines"`
	// CheckpointEvery is the most time between two checkpoints (while
	// lines are written). Default 60s.
	CheckpointEvery time.Duration `yaml:"checkpoint_every"`
	// CheckpointHMACKeyFile, when set, names a file whose contents (read
	// at start; not empty) sign every checkpoint with HMAC-SHA256. The
	// key is never logged. Default "": unsigned.
	CheckpointHMACKeyFile string `yaml:"checkpoint_hmac_key_file"`
}

// Client bounds client connections: timeouts, sizes and concurrency. Each
// refusal is answered with its status, audited, and counted in
// robotsproxy_client_refusals_total.
type Client struct {
	// MaxConnections caps concurrent client connections; more wait in the
	// kernel's accept queue. 0 means no cap. Default 4096.
	MaxConnections int `yaml:"max_connections"`
	// MaxRequestTargetBytes bounds the request target (the URL); a longer
	// one is answered 414. Default 8192.
	MaxRequestTargetBytes int `yaml:"max_request_target_bytes"`
	// MaxHeaderBytes bounds the request line and headers together; more is
	// answered 431. Default 32768.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// ReadHeaderTimeout bounds reading the request line and headers.
	// Default 10s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// BodyIdleTimeout bounds each wait for more of a request body; a client
	// that sends nothing for this long is cut off. Default 30s.
	BodyIdleTimeout time.Duration `yaml:"body_idle_timeout"`
	// BodyMinRate is the least average rate of a request body, in octets
	// per second, counted after the first BodyIdleTimeout: a client that
	// trickles its body slower is cut off (408, cut_off "body-slow"). 0
	// means no minimum. Default 1024.
	BodyMinRate int `yaml:"body_min_rate"`
	// IdleTimeout closes a keep-alive connection that has no request for
	// this long. Default 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// H2MaxConcurrentStreams bounds the streams one HTTP/2 connection
	// inside an intercepted tunnel may have open at once
	// (SETTINGS_MAX_CONCURRENT_STREAMS). Default 100.
	H2MaxConcurrentStreams int `yaml:"h2_max_concurrent_streams"`
	// H2MaxResetsPerSecond bounds the streams a client resets on one
	// HTTP/2 connection inside an intercepted tunnel, per second on
	// average with as many at once; past it the connection is closed
	// (GOAWAY ENHANCE_YOUR_CALM: the rapid-reset attack). Default 100.
	H2MaxResetsPerSecond int `yaml:"h2_max_resets_per_second"`
}

// Connect configures CONNECT tunnels.
type Connect struct {
	// Refuse answers every CONNECT with 403 (reason "connect-refused").
	// Default false.
	Refuse bool `yaml:"refuse"`
	// Ports are the ports CONNECT may reach. Default [443].
	Ports []int `yaml:"ports"`
	// RequireIdentity answers with 403 (reason "unidentified-tunnel") a
	// CONNECT that is not intercepted (no mitm CA) and that names no
	// product token in its User-Agent and has no pinned identity
	// (identity.users, identity.client_ranges): such a tunnel would be
	// decided for "/" under "*" only. Default false (decided under "*").
	RequireIdentity bool `yaml:"require_identity"`
}

// MITM configures HTTPS interception. By default (Mode "intercept")
// CONNECT tunnels are intercepted and every request inside is decided on
// its path, with the operator's CA (CACert, CAKey) or, when none is set,
// the CA the proxy creates in DataDir.
type MITM struct {
	// Mode is "intercept" (default) or "host-level". "host-level" leaves
	// tunnels opaque: each is decided once, for "/" of its host, under the
	// CONNECT's own identity, and the paths inside are never checked. It
	// cannot be combined with CACert.
	Mode string `yaml:"mode"`
	// CACert is the CA certificate PEM file ("robotsproxy ca init").
	// Default "": the CA in DataDir.
	CACert string `yaml:"ca_cert"`
	// CAKey is the CA private key PEM file. Default "".
	CAKey string `yaml:"ca_key"`
	// MaxCerts bounds the cached leaf certificates (one per host).
	// Default 1024.
	MaxCerts int `yaml:"max_certs"`
}

// Identity configures how crawlers are identified. The order is: pinned
// identities (Users by credentials, then ClientRanges), then Overrides,
// then the User-Agent header's own product tokens, then "*".
type Identity struct {
	// Users are proxy users (Proxy-Authorization: Basic) pinned to product
	// tokens. Default none.
	Users []UserRule `yaml:"users"`
	// RequireCredentials answers requests that are neither authenticated
	// nor from a pinned client range with 407. Default false.
	RequireCredentials bool `yaml:"require_credentials"`
	// ClientRanges pin client address ranges (CIDR) to product tokens; the
	// most specific range wins. Default none.
	ClientRanges []ClientRangeRule `yaml:"client_ranges"`
	// BrowserTokens are User-Agent product names that never identify a
	// crawler. Default rules.DefaultBrowserTokens().
	BrowserTokens []string `yaml:"browser_tokens"`
	// Overrides map User-Agent regular expressions to product tokens, first
	// match wins. Default none.
	Overrides []OverrideRule `yaml:"overrides"`
	// AuthThrottle limits failed proxy logins before bcrypt runs.
	AuthThrottle AuthThrottle `yaml:"auth_throttle"`
}

// AuthThrottle limits failed Proxy-Authorization attempts per client
// address and per user name (token buckets), and the bcrypt comparisons
// that run at once. A throttled attempt gets 429 with Retry-After and the
// audit reason "proxy-auth-throttled"; bcrypt does not run for it.
type AuthThrottle struct {
	// FailuresPerMinute is the sustained rate of failed attempts allowed
	// per client address and per user name. 0 disables throttling.
	// Default 10.
	FailuresPerMinute float64 `yaml:"failures_per_minute"`
	// Burst is how many failed attempts may come at once before the rate
	// applies. Default 5.
	Burst int `yaml:"burst"`
	// MaxConcurrentChecks bounds bcrypt comparisons running at once;
	// others wait for a slot (or for their request to end). Default 2.
	MaxConcurrentChecks int `yaml:"max_concurrent_checks"`
}

// UserRule is one proxy user.
type UserRule struct {
	// Name is the user name.
	Name string `yaml:"name"`
	// PasswordBcrypt is the bcrypt hash of the password
	// ("robotsproxy hash-password" prints one).
	PasswordBcrypt string `yaml:"password_bcrypt"`
	// Token is the product token the user's requests are decided as.
	Token string `yaml:"token"`
	// Mode is "enforce" or "report" for this user's requests; "" means
	// the top-level mode.
	Mode string `yaml:"mode"`
	// Purposes are what the user's crawler output is used for
	// ("train-ai", "search", "ai-input"); they win over the range's and
	// usage.purposes. Default none.
	Purposes []string `yaml:"purposes"`
}

// ClientRangeRule pins a client address range to a product token.
type ClientRangeRule struct {
	// CIDR is the range, e.g. "10.1.0.0/16" or "2001:db8::/32".
	CIDR string `yaml:"cidr"`
	// Token is the product token the range's requests are decided as.
	Token string `yaml:"token"`
	// Mode is "enforce" or "report" for this range's requests; "" means
	// the top-level mode.
	Mode string `yaml:"mode"`
	// Purposes are what the range's crawler output is used for; they win
	// over usage.purposes. Default none.
	Purposes []string `yaml:"purposes"`
}

// OverrideRule is one User-Agent override.
type OverrideRule struct {
	// UserAgent is a Go regular expression matched against the header.
	UserAgent string `yaml:"user_agent"`
	// Token is the product token to use when it matches.
	Token string `yaml:"token"`
}

// Robots configures the robots.txt client.
type Robots struct {
	// UserAgent is sent when fetching robots.txt.
	// Default "robotsproxy/1.0 (+https://github.com/robotsproxy/robotsproxy)".
	UserAgent string `yaml:"user_agent"`
	// ConnectTimeout bounds connecting to the origin. Default 5s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// Timeout bounds a whole fetch, redirects and body included. Default 15s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxBytes is the parse limit in bytes (RFC 9309 2.5, at least 512000).
	// Default 524288.
	MaxBytes int `yaml:"max_bytes"`
	// TooManyRequests is the access result of a 429 response:
	// "unreachable" (default, as large crawlers do) or "unavailable".
	TooManyRequests string `yaml:"too_many_requests"`
}

// Cache configures the robots.txt cache (RFC 9309 2.4).
type Cache struct {
	// MaxEntries bounds the cached authorities. Default 500000
	// (rules.DefaultCacheMaxEntries): with cache.max_bytes' default the
	// two bounds meet at about 1.07 KB an entry, where a median robots.txt
	// accounts about 1.3 KB; the byte bound usually evicts first.
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes bounds the memory the cached robots.txt results retain, in
	// octets (compiled rules, URLs, errors and a fixed overhead of about
	// 0.6 KB per authority); the oldest are evicted first. Default
	// 536870912 (512 MiB); at least 1048576 (1 MiB).
	MaxBytes int `yaml:"max_bytes"`
	// MaxTTL is the longest a result is used; at most 24h. Default 24h.
	MaxTTL time.Duration `yaml:"max_ttl"`
	// MinTTL is the shortest, whatever Cache-Control says; 0 is no
	// minimum. Default 1m.
	MinTTL time.Duration `yaml:"min_ttl"`
	// UnreachableRetry is when an unreachable robots.txt is tried again.
	// Default 1m.
	UnreachableRetry time.Duration `yaml:"unreachable_retry"`
	// StaleFor is how long a successful copy stands in while the host is
	// unreachable; 0 never (complete disallow at once, RFC 9309 2.3.1.4).
	// Default 24h.
	StaleFor time.Duration `yaml:"stale_for"`
}

// Upstream configures the proxy's outbound transport.
type Upstream struct {
	// ConnectTimeout bounds connecting to an origin. Default 10s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ResponseHeaderTimeout bounds waiting for response headers. Default 60s.
	ResponseHeaderTimeout time.Duration `yaml:"response_header_timeout"`
	// MaxIdleConns bounds idle connections in total. Default 4096, the
	// default client.max_connections: each client connection keeps at most
	// one upstream connection busy (HTTP/1.1), so the pool can keep every
	// one it will need again.
	MaxIdleConns int `yaml:"max_idle_conns"`
	// MaxIdleConnsPerHost bounds idle connections per origin; it should be
	// at least the peak number of concurrent requests to one origin, or
	// requests open new connections. Default 1024.
	MaxIdleConnsPerHost int `yaml:"max_idle_conns_per_host"`
	// IdleTimeout closes idle connections after this long. Default 90s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// CAFile is a PEM file of CA certificates that origins' TLS
	// certificates are verified against too, beside the system roots
	// (which SSL_CERT_FILE and SSL_CERT_DIR set): an origin whose
	// certificate a private CA issued. It applies to robots.txt fetches
	// and forwarded requests alike. Read at start. Default "": the system
	// roots alone.
	CAFile string `yaml:"ca_file"`
}

// Default returns the configuration used for every key a file leaves out.
func Default() Config {
	return Config{
		Mode:               string(rules.ModeEnforce),
		Listen:             "127.0.0.1:8080",
		AdminListen:        "127.0.0.1:9090",
		AllowPrivateRanges: []string{},
		ExemptHosts:        []string{},
		AllowHosts:         []string{},
		DenyHosts:          []string{},
		Connect:            Connect{Ports: rules.DefaultConnectPorts()},
		MITM:               MITM{Mode: MITMIntercept, MaxCerts: rules.DefaultMaxCerts},
		Log:                Log{MaxSizeMB: 100, MaxBackups: 5, MaxFieldBytes: 2048},
		Audit: Audit{Chain: true, ArchiveMaxMB: 1024, OnWriteError: "refuse",
			CheckpointEveryLines: rules.DefaultCheckpointLines, CheckpointEvery: rules.DefaultCheckpointEvery},
		Identity: Identity{
			Users:         []UserRule{},
			ClientRanges:  []ClientRangeRule{},
			BrowserTokens: rules.DefaultBrowserTokens(),
			Overrides:     []OverrideRule{},
			AuthThrottle:  AuthThrottle{FailuresPerMinute: 10, Burst: 5, MaxConcurrentChecks: 2},
		},
		Robots: Robots{
			UserAgent:       "robotsproxy/1.0 (+https://github.com/robotsproxy/robotsproxy)",
			ConnectTimeout:  5 * time.Second,
			Timeout:         15 * time.Second,
			MaxBytes:        robots.DefaultMaxBytes,
			TooManyRequests: "unreachable",
		},
		Cache: Cache{
			MaxEntries:       rules.DefaultCacheMaxEntries,
			MaxBytes:         rules.DefaultCacheMaxBytes,
			MaxTTL:           rules.MaxCacheTTL,
			MinTTL:           rules.DefaultMinTTL,
			UnreachableRetry: time.Minute,
			StaleFor:         24 * time.Hour,
		},
		Upstream: Upstream{
			ConnectTimeout:        10 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
			MaxIdleConns:          rules.DefaultMaxIdleConns,
			MaxIdleConnsPerHost:   rules.DefaultMaxIdleConnsPerHost,
			IdleTimeout:           90 * time.Second,
		},
		Client: Client{
			MaxConnections:         4096,
			MaxRequestTargetBytes:  rules.DefaultMaxRequestTargetBytes,
			MaxHeaderBytes:         32 << 10,
			ReadHeaderTimeout:      10 * time.Second,
			BodyIdleTimeout:        rules.DefaultBodyIdleTimeout,
			BodyMinRate:            1024,
			IdleTimeout:            60 * time.Second,
			H2MaxConcurrentStreams: rules.DefaultH2MaxConcurrentStreams,
			H2MaxResetsPerSecond:   rules.DefaultH2MaxResetsPerSecond,
		},
		ShutdownTimeout: 10 * time.Second,
		Politeness:      defaultPoliteness(),
		Usage:           Usage{Purposes: map[string][]string{}},
		Shared:          defaultShared(),
		Payments:        Payments{Identities: []PaymentIdentity{}, BreachBlock: 24 * time.Hour},
		Signing:         defaultSigning(),
		Live:            defaultLive(),
	}
}
