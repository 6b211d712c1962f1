package policy

import (
	"context"
	"crypto/sha256"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/robots"
)

// AccessResult is the outcome of fetching a robots.txt file, in the terms
// of RFC 9309 section 2.3.1: the audit line's access_result.
type AccessResult string

const (
	// Successful: a 2xx response; its rules are followed (2.3.1.1).
	Successful AccessResult = auditlog.AccessSuccessful
	// Unavailable: a 4xx response, or too many redirects; the crawler may
	// access anything (2.3.1.2, 2.3.1.3).
	Unavailable AccessResult = auditlog.AccessUnavailable
	// Unreachable: a 5xx response, a network, DNS or TLS error, a timeout,
	// or a refused destination; complete disallow (2.3.1.4).
	Unreachable AccessResult = auditlog.AccessUnreachable
)

// Access is the result of one robots.txt fetch for one authority (or of
// one fetch of another document, such as an RSL license: Doc).
type Access struct {
	// Result is the access result.
	Result AccessResult
	// URL is the robots.txt URL of the initial authority.
	URL string
	// FinalURL is the URL that answered, after redirects.
	FinalURL string
	// Status is the HTTP status of the final response, 0 when none came.
	Status int
	// Err is the network or protocol error, if any.
	Err error
	// Refused is true when the destination guard refused an address.
	Refused bool
	// Cause is the class of failure behind an Unreachable result,
	// CauseNone for every other result.
	Cause Cause
	// Robots is the compiled file, set only when Result is Successful.
	Robots *robots.Robots
	// Doc is the parsed document of a fetch of another document than
	// robots.txt (an RSL license, say), set only when Result is
	// Successful; nil for a robots.txt fetch.
	Doc Document
	// MaxAge is the response's Cache-Control max-age, or -1 when absent.
	MaxAge time.Duration
	// Duration is how long the fetch took.
	Duration time.Duration
	// FetchedAt is when the fetch began (the request was sent).
	FetchedAt time.Time
	// SHA256 is the SHA-256 of the body octets read, exactly as they came
	// (before charset bridging and parsing): the whole body of a 2xx
	// response, or its first parse-limit+1 octets when it is longer (what
	// the parser saw; the octet past the limit tells it the file was cut).
	// Zero when no body was read: every result but Successful.
	SHA256 [sha256.Size]byte
	// Header holds the response's Content-Type, Cache-Control,
	// Last-Modified and ETag fields (those present), nil when no response
	// came: the first value of each, cut to 1 KiB, so a hostile origin
	// cannot grow the audit archive or a fleet's shared record. The
	// Content-Type charset is what the body was parsed with.
	Header http.Header
	// Raw is the body SHA256 was computed over, for the robots.txt archive
	// only; nil when no body was read. Whoever archives it clears it
	// before the Access is cached, so the cache keeps the compiled rules
	// and no second copy of the text.
	Raw []byte
}

// HasBody reports whether a body was read (Raw and SHA256 are set).
func (a *Access) HasBody() bool { return a.SHA256 != [sha256.Size]byte{} }

// Document is a document other than robots.txt that a fetch read and
// parsed (Access.Doc): an RSL license, for one. It is immutable once
// parsed.
type Document interface {
	// Retained returns the octets the document keeps live, for a cache's
	// memory bound.
	Retained() int
}

// CacheState says where the access result used for a decision came from:
// the audit line's cache.
type CacheState string

const (
	// CacheHit: a fresh cached result.
	CacheHit CacheState = "hit"
	// CacheMiss: fetched for this request (or by a concurrent one).
	CacheMiss CacheState = "miss"
	// CacheStale: the host is unreachable and an earlier successful copy
	// stands in for it (RFC 9309 2.3.1.4, 2.4).
	CacheStale CacheState = "stale"
	// CacheNone: no robots.txt was needed (for example /robots.txt itself).
	CacheNone CacheState = ""
)

// Cache gives the robots.txt access result in force for an authority,
// fetching and caching it when it holds none that is fresh (RFC 9309
// 2.3.1, 2.4). The robotsproxy server plugs in its own, which coalesces
// fetches and bounds its memory; a program may answer from files, or from
// its own fetcher. Implementations are safe for concurrent use.
type Cache interface {
	// GetKeyed returns the access result in force for scheme://authority
	// (canonical: see Authority) and where it came from. key is
	// CacheKey(scheme, authority), made once per authority by the caller
	// so that a lookup allocates nothing. ctx bounds the wait; a result
	// that cannot be had is Unreachable (complete disallow), never an
	// error.
	GetKeyed(ctx context.Context, key, scheme, authority string) (Access, CacheState)
}

// CacheKey is the cache key of a canonical scheme and authority (see
// Authority): "scheme://host:port".
func CacheKey(scheme, authority string) string { return scheme + "://" + authority }

// RobotsURL returns the robots.txt URL for a canonical scheme and
// authority (see Authority), without the scheme's default port (RFC 9309
// 2.3).
func RobotsURL(scheme, authority string) string {
	return Origin(scheme, authority) + "/robots.txt"
}

// Origin returns "scheme://authority" for a canonical scheme and
// authority (see Authority), without the scheme's default port: the site
// whose robots.txt applies (RFC 9309 2.3), as RobotsURL names it.
func Origin(scheme, authority string) string {
	return scheme + "://" + displayAuthority(scheme, authority)
}

// displayAuthority drops the scheme's default port from host:port.
func displayAuthority(scheme, authority string) string {
	host, port, _ := net.SplitHostPort(authority)
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return authority
}
