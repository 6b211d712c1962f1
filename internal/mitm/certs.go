package mitm

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"
	"golang.org/x/sync/singleflight"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Defaults for CertsOptions.
const (
	// DefaultMaxEntries bounds the leaf-certificate cache
	// (rules.DefaultMaxCerts, the default of mitm.max_certs).
	DefaultMaxEntries = rules.DefaultMaxCerts
	// DefaultRenewBefore is how long before a leaf's NotAfter the cache
	// stops serving it and signs a new one.
	DefaultRenewBefore = 24 * time.Hour
)

// CertsOptions configure NewCerts. The zero value is valid.
type CertsOptions struct {
	// MaxEntries bounds the cache (hosts); least recently used entries are
	// evicted beyond it. Default DefaultMaxEntries (1024).
	MaxEntries int
	// LeafValidity is the leaf lifetime after signing; default
	// DefaultLeafValidity (7 days). NotAfter is capped at the CA's NotAfter.
	LeafValidity time.Duration
	// RenewBefore is how long before NotAfter a cached leaf is replaced;
	// default DefaultRenewBefore (24h). It is clamped to half the leaf's
	// remaining lifetime, so short-lived leaves are still cached.
	RenewBefore time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Rand supplies serial numbers; default crypto/rand.Reader.
	Rand io.Reader
}

// CertStats are cumulative counters of a Certs since NewCerts, plus the
// current cache size. Every Get with a valid host counts as exactly one
// Hit or one Miss, so the hit rate is Hits/(Hits+Misses).
type CertStats struct {
	// Hits are Gets answered from the cache without waiting.
	Hits uint64
	// Misses are Gets that found no fresh cache entry. Each was answered
	// by signing a leaf (counted in Signed), by sharing the leaf of a
	// concurrent Get for the same host, or with a signing error.
	Misses uint64
	// Signed is the number of leaf certificates signed.
	Signed uint64
	// Errors are Gets that returned an error (invalid host or failed
	// signing); Gets with an invalid host are not Hits or Misses.
	Errors uint64
	// Evictions are entries dropped to respect MaxEntries.
	Evictions uint64
	// Entries is the current number of cached certificates.
	Entries uint64
}

// HitRate returns Hits/(Hits+Misses) in [0, 1], or 0 before any Get.
func (s CertStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Certs issues leaf certificates signed by a CA and caches them per host
// (lower-cased name or canonical IP, port stripped) in a bounded LRU cache.
// Concurrent Gets for the same uncached host sign once. Certs is safe for
// concurrent use.
type Certs struct {
	ca    *CA
	opts  CertsOptions
	group singleflight.Group

	mu    sync.Mutex
	cache *lru

	hits, misses, signed, errs, evictions atomic.Uint64
}

// NewCerts returns a certificate cache for ca. It fails when ca is nil or
// an option is negative.
func NewCerts(ca *CA, opts CertsOptions) (*Certs, error) {
	if ca == nil {
		return nil, errors.New("new certificate cache: CA is nil")
	}
	if opts.MaxEntries < 0 || opts.LeafValidity < 0 || opts.RenewBefore < 0 {
		return nil, fmt.Errorf("new certificate cache: negative option in %+v", opts)
	}
	if opts.MaxEntries == 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.LeafValidity == 0 {
		opts.LeafValidity = DefaultLeafValidity
	}
	if opts.RenewBefore == 0 {
		opts.RenewBefore = DefaultRenewBefore
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	return &Certs{ca: ca, opts: opts, cache: newLRU(opts.MaxEntries)}, nil
}

// Get returns the certificate chain (leaf + CA) and key for host, signing
// it if the cache holds no fresh one. host is as for CA.SignLeaf
// ("example.com:443", "[::1]:443", ...). The result is shared between
// callers and must not be modified. Errors wrap ErrInvalidHost for unusable
// hosts, or report a signing failure such as an expired CA.
func (c *Certs) Get(host string) (*tls.Certificate, error) {
	t, err := parseTarget(host)
	if err != nil {
		c.errs.Add(1)
		return nil, err
	}
	if cert := c.lookup(t.key); cert != nil {
		c.hits.Add(1)
		return cert, nil
	}
	c.misses.Add(1)
	v, err, _ := c.group.Do(t.key, func() (any, error) { return c.fill(t) })
	if err != nil {
		c.errs.Add(1)
		return nil, err
	}
	return v.(*tls.Certificate), nil
}

// fill runs once per host at a time (singleflight). It re-checks the cache,
// because a previous flight may have stored the entry after this caller's
// lookup, and otherwise signs and stores a new leaf.
func (c *Certs) fill(t target) (*tls.Certificate, error) {
	if cert := c.lookup(t.key); cert != nil {
		return cert, nil
	}
	now := c.opts.Now()
	cert, err := c.ca.sign(t, now, c.opts.LeafValidity, c.opts.Rand)
	if err != nil {
		return nil, err
	}
	c.signed.Add(1)
	c.store(t.key, cert, c.refreshAt(cert, now))
	return cert, nil
}

// refreshAt is when a leaf signed at now stops being served from the cache.
func (c *Certs) refreshAt(cert *tls.Certificate, now time.Time) time.Time {
	notAfter := cert.Leaf.NotAfter
	renew := min(c.opts.RenewBefore, notAfter.Sub(now)/2)
	return notAfter.Add(-renew)
}

func (c *Certs) lookup(key string) *tls.Certificate {
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache.get(key, now)
}

func (c *Certs) store(key string, cert *tls.Certificate, refreshAt time.Time) {
	c.mu.Lock()
	n := c.cache.add(key, cert, refreshAt)
	c.mu.Unlock()
	c.evictions.Add(uint64(n))
}

// Stats returns a snapshot of the counters. Counters are read one by one,
// so under concurrent Gets they may be mutually off by in-flight calls.
func (c *Certs) Stats() CertStats {
	c.mu.Lock()
	entries := c.cache.len()
	c.mu.Unlock()
	return CertStats{
		Hits:      c.hits.Load(),
		Misses:    c.misses.Load(),
		Signed:    c.signed.Load(),
		Errors:    c.errs.Load(),
		Evictions: c.evictions.Load(),
		Entries:   uint64(entries),
	}
}

// TLSConfig has the signature of goproxy.ConnectAction.TLSConfig: it
// returns a server tls.Config (TLS 1.2 minimum) presenting the certificate
// for host, the CONNECT target as goproxy passes it ("example.com:443").
// ctx is not used and may be nil. On error goproxy answers the client's
// CONNECT tunnel with a plaintext 502, which the client sees as a failed
// TLS handshake.
func (c *Certs) TLSConfig(host string, _ *goproxy.ProxyCtx) (*tls.Config, error) {
	cert, err := c.Get(host)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{*cert},
	}, nil
}
