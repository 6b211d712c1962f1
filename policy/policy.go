// Package policy decides whether a crawler's request may go ahead under
// RFC 9309: who the crawler is (its product tokens), what the target's
// robots.txt says for it, what the access result of that robots.txt implies
// (section 2.3.1), and how long results are cached (section 2.4).
package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/robotsproxy/robotsproxy/robots"
)

// Options configure a Policy.
type Options struct {
	// Identifier finds product tokens. Required.
	Identifier *Identifier
	// Cache holds robots.txt access results. Required.
	Cache *Cache
	// ExemptHosts are hosts whose requests are allowed without consulting
	// robots.txt (reason "override"). "example.com" matches that host only;
	// ".example.com" matches every subdomain of it too.
	ExemptHosts []string
}

// Policy decides requests. It is safe for concurrent use.
type Policy struct {
	opts Options
}

// New returns a Policy.
func New(o Options) *Policy {
	hosts := make([]string, len(o.ExemptHosts)) // never modify the caller's slice
	for i, h := range o.ExemptHosts {
		hosts[i] = exemptHost(h)
	}
	o.ExemptHosts = hosts
	return &Policy{opts: o}
}

// exemptHost canonicalises an ExemptHosts entry as Authority does a host
// (lower case, IDNA A-labels, IPv6 without brackets), keeping a leading ".".
func exemptHost(h string) string {
	dot := ""
	if strings.HasPrefix(h, ".") {
		dot, h = ".", h[1:]
	}
	h = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	if ascii, err := asciiHost(h); err == nil {
		h = ascii
	}
	return dot + h
}

// Request is what the policy needs to know about one request.
type Request struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is the request's host with optional port, as sent.
	Host string
	// Path is the path and query as sent, still percent-encoded
	// ("/a%20b?q=1"); "" means "/".
	Path string
	// UserAgent is the User-Agent header value; "" when absent.
	UserAgent string
}

// Identify returns the crawler identity for a User-Agent header value.
func (p *Policy) Identify(userAgent string) Identity {
	return p.opts.Identifier.Identify(userAgent)
}

// Decide returns the decision for a request. It fetches the authority's
// robots.txt when the cache holds no fresh result, waiting for at most the
// fetcher's timeout. Unreachable robots.txt files mean complete disallow
// (RFC 9309 2.3.1.4): when in doubt, Decide denies.
func (p *Policy) Decide(ctx context.Context, r Request) Decision {
	d := Decision{Identity: p.Identify(r.UserAgent)}
	scheme, authority, err := Authority(r.Scheme, r.Host)
	if err != nil {
		d.Reason, d.Err = ReasonBadRequest, err
		return d
	}
	d.RobotsURL = RobotsURL(scheme, authority)
	path := robots.NormalizePath(r.Path)
	switch {
	case p.exempt(authority):
		d.Allowed, d.Reason = true, ReasonOverride
		return d
	case robots.IsRobotsTxt(path):
		// RFC 9309 2.2.2: the /robots.txt URI is implicitly allowed.
		d.Allowed, d.Reason = true, ReasonImplicit
		return d
	}
	a, state := p.opts.Cache.Get(ctx, scheme, authority)
	d.Access, d.Status, d.Cache, d.Err = a.Result, a.Status, state, a.Err
	switch a.Result {
	case Successful:
		d.Verdict = a.Robots.TestNormalized(path, d.Identity.Candidates...)
		d.Allowed, d.Reason = d.Verdict.Allowed, ReasonRule
		if d.Verdict.Rule == nil {
			d.Reason = ReasonNoMatch
		}
	case Unavailable:
		d.Allowed, d.Reason = true, ReasonUnavailable // RFC 9309 2.3.1.3
	default:
		d.Reason = ReasonUnreachable // RFC 9309 2.3.1.4: complete disallow
		if a.Refused {
			d.Reason = ReasonDestination
		}
	}
	return d
}

// exempt reports whether the operator exempted the authority's host.
func (p *Policy) exempt(authority string) bool {
	if len(p.opts.ExemptHosts) == 0 {
		return false
	}
	host, _, _ := net.SplitHostPort(authority)
	for _, e := range p.opts.ExemptHosts {
		if host == e || strings.HasPrefix(e, ".") && (host == e[1:] || strings.HasSuffix(host, e)) {
			return true
		}
	}
	return false
}

var errNoHost = errors.New("no host")

// Authority canonicalises a request's scheme and host into the cache key of
// RFC 9309 2.3 and 2.4: a lower-case scheme ("http" or "https"), and
// host:port with the host lower-cased and converted to ASCII (IDNA) and the
// scheme's default port filled in.
func Authority(scheme, hostport string) (string, string, error) {
	scheme = strings.ToLower(scheme)
	var defPort string
	switch scheme {
	case "http":
		defPort = "80"
	case "https":
		defPort = "443"
	default:
		return "", "", fmt.Errorf("scheme %q: robots.txt enforcement covers http and https only", scheme)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), defPort
	}
	if host == "" {
		return "", "", fmt.Errorf("authority %q: %w", hostport, errNoHost)
	}
	if port == "" {
		port = defPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("authority %q: invalid port %q", hostport, port)
	}
	port = strconv.Itoa(n) // ":080" and ":80" are one authority
	ascii, err := asciiHost(host)
	if err != nil {
		return "", "", err
	}
	return scheme, net.JoinHostPort(ascii, port), nil
}

// asciiHost lower-cases a host and converts an internationalised name to
// its ASCII (IDNA) form. ASCII names may hold letters, digits, "-", "."
// and "_" (which occurs in real DNS), or be an IP address.
func asciiHost(host string) (string, error) {
	host = strings.ToLower(host)
	if net.ParseIP(host) != nil {
		return host, nil
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= 0x80:
			ascii, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return "", fmt.Errorf("host %q: %w", host, err)
			}
			return ascii, nil
		case !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'):
			return "", fmt.Errorf("host %q: invalid character %q", host, c)
		}
	}
	return host, nil
}

// RobotsURL returns the robots.txt URL for a canonical scheme and authority
// (see Authority), without the scheme's default port (RFC 9309 2.3).
func RobotsURL(scheme, authority string) string {
	return scheme + "://" + displayAuthority(scheme, authority) + "/robots.txt"
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
