package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

var (
	errHostDenied     = errors.New("host is not allowed by the destination policy")
	errConnectRefused = errors.New("CONNECT is refused by configuration")
	errConnectPort    = errors.New("CONNECT port is not allowed")
	errConnectNoPort  = errors.New("want host:port with an explicit port (RFC 9110 9.3.6)")
	// errConnectInTunnel: a CONNECT read inside an intercepted tunnel.
	errConnectInTunnel = errors.New("CONNECT inside an intercepted tunnel: send the requests themselves")
	// errUnidentifiedTunnel is the error of reason "unidentified-tunnel".
	errUnidentifiedTunnel = errors.New("CONNECT names no product token and the client is not pinned; connect.require_identity refuses a host-level tunnel under \"*\"")
)

// hostList matches canonical hosts against operator entries:
// "example.com" is that host only, ".example.com" is it and every subdomain.
type hostList []string

// newHostList canonicalises entries as Authority does hosts (lower case,
// IDNA A-labels, IPv6 without brackets), keeping a leading ".". It never
// modifies entries.
func newHostList(entries []string) hostList {
	l := make(hostList, len(entries))
	for i, h := range entries {
		dot := ""
		if strings.HasPrefix(h, ".") {
			dot, h = ".", h[1:]
		}
		h = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
		if ascii, err := rules.ASCIIHost(h); err == nil {
			h = ascii
		}
		l[i] = dot + sameHost(h)
	}
	return l
}

// sameHost gives the spellings of one host that Authority keeps apart one
// form, so that they cannot slip past a list: no trailing dot
// ("example.com." is example.com), and IP addresses in canonical form with
// IPv4-mapped IPv6 as IPv4 ("2001:0db8:0::1" is 2001:db8::1,
// "::ffff:192.0.2.1" is 192.0.2.1).
func sameHost(h string) string {
	h = strings.TrimSuffix(h, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// match reports whether a canonical host is in the list.
func (l hostList) match(host string) bool {
	if len(l) == 0 {
		return false // and sameHost, which may parse an address, is not needed
	}
	host = sameHost(host)
	for _, e := range l {
		if host == e || strings.HasPrefix(e, ".") && (host == e[1:] || strings.HasSuffix(host, e)) {
			return true
		}
	}
	return false
}

// hostOf returns the host of a canonical authority (see Authority).
func hostOf(authority string) string {
	host, _, _ := net.SplitHostPort(authority)
	return host
}

// destinationAllowed applies the host allow and deny lists: a host on the
// deny list is refused; when the allow list is not empty, a host must be on
// it.
func (p *Policy) destinationAllowed(host string) bool {
	if p.deny.match(host) {
		return false
	}
	return len(p.allow) == 0 || p.allow.match(host)
}

// DecideConnect decides a CONNECT request for r.Host (host:port). One read
// inside an intercepted tunnel (r.Tunnel set) is refused (reason
// bad-request): a tunnel is not opened inside another. Refusal by
// configuration, a port outside the allowed CONNECT ports and the host
// lists come first. Then, when intercept is true, the tunnel is allowed
// (reason "intercept") and every request inside it is decided on its own
// with Decide. Otherwise the decision is host-level: with
// Options.RequireConnectIdentity a CONNECT with no product token and no
// pinned identity is refused (reason "unidentified-tunnel") unless the
// host is exempt; else the
// tunnel is allowed when the crawler may fetch "/" of the authority, over
// http for port 80 and https for any other port.
func (p *Policy) DecideConnect(ctx context.Context, r Request, intercept bool) Decision {
	d := Decision{Identity: p.IdentityOf(r)}
	if r.Tunnel != "" { // a tunnel is not opened inside another
		d.Reason, d.Err = auditlog.ReasonBadRequest, errConnectInTunnel
		return d
	}
	if p.opts.RefuseConnect {
		d.Reason, d.Err = auditlog.ReasonConnectRefused, errConnectRefused
		return d
	}
	scheme, authority, err := ConnectAuthority(r.Host)
	if err != nil {
		d.Reason, d.Err = auditlog.ReasonBadRequest, err
		return d
	}
	d.RobotsURL = RobotsURL(scheme, authority)
	_, portStr, _ := net.SplitHostPort(authority)
	port, _ := strconv.Atoi(portStr)
	switch {
	case !slices.Contains(p.ports, port):
		d.Reason, d.Err = auditlog.ReasonConnectPort, &ConnectPortError{Port: port, Allowed: p.ports}
	case !p.destinationAllowed(hostOf(authority)):
		d.Reason, d.Err = auditlog.ReasonHostDenied, fmt.Errorf("%s: %w", hostOf(authority), errHostDenied)
	case intercept:
		d.Allowed, d.Reason = true, auditlog.ReasonIntercept
	case p.opts.RequireConnectIdentity && d.Identity.Source == SourceDefault && !p.exempts.match(hostOf(authority)):
		// An exempt host is not decided by robots.txt: who asks does not
		// matter there.
		d.Reason, d.Err = auditlog.ReasonUnidentifiedTunnel, errUnidentifiedTunnel
	default:
		// Host-level: robots.txt's decision for "/" of the authority. A
		// tunnel carries no request of its own to decide usage for: the
		// usage step is not run.
		r.Scheme, r.Path = scheme, "/"
		d = p.decide(ctx, r)
		p.markReportOnly(&d, r.Pin)
	}
	return d
}

// ConnectAuthority canonicalises a CONNECT request target (RFC 9110
// 9.3.6: authority-form, host and port) into the scheme whose robots.txt
// applies ("http" for port 80, else "https") and the canonical authority
// (see Authority), which is what the proxy dials: the port decided is the
// port dialled. A target with no explicit port ("127.0.0.1", "[::1]",
// "example.com.", "::1:443") is ambiguous, since clients and servers
// disagree on the default, and is an error (HTTP 400).
func ConnectAuthority(target string) (scheme, authority string, err error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		return "", "", fmt.Errorf("CONNECT target %q: %w", target, errConnectNoPort)
	}
	scheme = "https"
	if strings.TrimLeft(port, "0") == "80" { // ":080" too, as Authority
		scheme = "http"
	}
	_, authority, err = Authority(scheme, target)
	return scheme, authority, err
}

// Authenticate resolves the pinned identity of a request from its
// Proxy-Authorization header value and client address (see Pinner.Pin).
// When that fails it returns a denial with reason "proxy-auth-required" or
// "proxy-auth-failed", which the proxy answers with 407, or
// "proxy-auth-throttled" with RetryAfter set, answered with 429. ctx bounds
// the wait for a bcrypt slot.
func (p *Policy) Authenticate(ctx context.Context, proxyAuthorization string, client netip.Addr) (Pin, *Decision) {
	if p.opts.Pinner == nil {
		return Pin{}, nil
	}
	pin, err := p.opts.Pinner.Pin(ctx, proxyAuthorization, client)
	if err == nil {
		return pin, nil
	}
	d := &Decision{Reason: auditlog.ReasonAuthFailed, Err: err, Identity: Identity{Token: "*", Source: SourceDefault, User: pin.User}}
	var throttled *ThrottledError
	switch {
	case errors.Is(err, ErrProxyAuthRequired):
		d.Reason = auditlog.ReasonAuthRequired
	case errors.As(err, &throttled):
		d.Reason, d.RetryAfter = auditlog.ReasonAuthThrottled, throttled.RetryAfter
	}
	return pin, d
}

// Exemptions returns the test Decide applies to a request's target for
// hosts, the operator's exempt hosts (Options.ExemptHosts): whether a
// request to scheme and hostport (host with optional port, as sent; see
// Authority) is allowed without robots.txt, reason override. The error is
// Authority's. audit verify checks override lines with it.
func Exemptions(hosts []string) func(scheme, hostport string) (bool, error) {
	l := newHostList(hosts)
	return func(scheme, hostport string) (bool, error) {
		_, authority, err := Authority(scheme, hostport)
		if err != nil {
			return false, err
		}
		return l.match(hostOf(authority)), nil
	}
}
