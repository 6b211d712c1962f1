package proxy

import (
	"crypto/tls"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// TransportOptions size the outbound transport. Zero values mean the
// defaults given.
type TransportOptions struct {
	// ConnectTimeout bounds TCP connect; default 10s.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers; default 60s.
	ResponseHeaderTimeout time.Duration
	// MaxIdleConns bounds idle connections in total; default
	// DefaultMaxIdleConns.
	MaxIdleConns int
	// MaxIdleConnsPerHost bounds idle connections per origin; default
	// DefaultMaxIdleConnsPerHost. (http.DefaultTransport keeps 2, which
	// costs about a third of the throughput under load.)
	MaxIdleConnsPerHost int
	// IdleTimeout closes idle connections; default 90s.
	IdleTimeout time.Duration
	// AllowPrivate lets the transport dial every address. By default it
	// refuses loopback, private, link-local and other non-public
	// addresses (allow_private), checked on the resolved address at dial
	// time so that a DNS answer cannot route around it; a refused dial
	// makes the proxy answer 403, reason destination-refused.
	AllowPrivate bool
	// AllowPrivateRanges are non-public ranges it may dial all the same
	// (allow_private_ranges; 10.1.0.0/16 for an internal crawl target,
	// say).
	AllowPrivateRanges []netip.Prefix
	// TLS is the TLS configuration towards origins (its RootCAs, when
	// set, are the roots origins are verified against); nil: the system
	// roots. The transport uses a clone: Go's transport adds "h2" and
	// "http/1.1" to the NextProtos of its own on first use, which would
	// race with every other user of a shared one (the robots.txt
	// fetcher's).
	TLS *tls.Config
}

// Upstream pool defaults. The sizing rule: MaxIdleConnsPerHost at least the
// peak number of concurrent requests to one origin, since connections
// returned beyond it are closed and the next burst opens new ones (at 512 client
// connections to one origin, 256 made 1.7 to 4.4% of requests reconnect,
// 1024 none, and throughput rose 15%); MaxIdleConns at least the client
// connection cap (client.max_connections, default 4096), since an HTTP/1.1
// client connection keeps at most one upstream connection busy. An idle
// connection costs about 25 KB of memory (two goroutines with their
// stacks and two 4 KiB buffers), plus the kernel's socket buffers.
// They are the defaults of upstream.max_idle_conns and
// upstream.max_idle_conns_per_host (rules).
const (
	DefaultMaxIdleConns        = rules.DefaultMaxIdleConns
	DefaultMaxIdleConnsPerHost = rules.DefaultMaxIdleConnsPerHost
)

// NewTransport returns the transport that carries allowed requests to
// origins. It never uses a proxy from the environment, refuses non-public
// destinations (see AllowPrivate), verifies TLS against the system roots
// (or TLS's), and neither adds Accept-Encoding nor decompresses, so
// requests and responses pass unchanged. It speaks HTTP/2 to an HTTPS
// origin that offers h2 by ALPN (RFC 9113 3.2), many requests on one
// connection, and HTTP/1.1 otherwise; both dial through the guard. Its
// connections report when a request is sent (see traceSend).
func NewTransport(o TransportOptions) *http.Transport {
	g := &netguard.Guard{AllowPrivate: o.AllowPrivate, Allow: slices.Clone(o.AllowPrivateRanges)}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.ResponseHeaderTimeout, 60*time.Second)
	def(&o.IdleTimeout, 90*time.Second)
	if o.MaxIdleConns == 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           sendDialer(g.DialContext(o.ConnectTimeout)), // see traceSend
		MaxIdleConns:          o.MaxIdleConns,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       o.IdleTimeout,
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true, // with our DialContext, HTTP/2 is otherwise off
		TLSClientConfig:       o.TLS.Clone(),
	}
}
