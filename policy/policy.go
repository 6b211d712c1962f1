// Package policy decides whether a crawler's request may go ahead under
// RFC 9309: who the crawler is (its product tokens), what the target's
// robots.txt says for it, what the access result of that robots.txt implies
// (section 2.3.1), and how long results are cached (section 2.4). The
// steps after robots.txt are decided here too: the usage preferences and
// RSL licenses that apply to the purposes declared for the crawler
// (DecideUsage, DecideLicense), politeness admission (Admit,
// DecideAdmission), what an origin's answer says (Observe), and the
// refusals a proxy makes on its own (DecideTargetTooLong,
// DecideAuditUnavailable, DecideShutdown, ...). A Decision is finished
// where it is made and carries its own words (Text, Deciding): the proxy
// renders it, and check and audit verify decide through the same
// functions.
//
// A Policy reads the world through the interfaces of its Options: an
// Identifier names the crawler, a Cache gives robots.txt access results,
// a Pinner pins identities to credentials and client ranges, Licenses
// read RSL licenses and Politeness spaces requests. The robotsproxy
// server plugs in its own; a program may plug in others, and every type
// they speak is this package's.
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
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Options configure a Policy.
type Options struct {
	// Identifier finds product tokens in User-Agent header values; nil
	// finds none, so that every request that is not pinned is decided
	// under the "*" group (RFC 9309 2.2.1).
	Identifier Identifier
	// Cache gives the robots.txt access results that decide requests.
	// Nil has none: every request that needs robots.txt is decided as if
	// it were unreachable, a complete disallow (RFC 9309 2.3.1.4).
	Cache Cache
	// Pinner pins identities by proxy credentials and client address; nil
	// pins nothing.
	Pinner Pinner
	// ExemptHosts are hosts whose requests are allowed without consulting
	// robots.txt (reason "override"). "example.com" matches that host only;
	// ".example.com" matches every subdomain of it too.
	ExemptHosts []string
	// AllowHosts, when not empty, are the only hosts requests may go to;
	// DenyHosts are hosts they may never go to (reason "host-denied"). Same
	// forms as ExemptHosts; the deny list wins.
	AllowHosts, DenyHosts []string
	// ConnectPorts are the ports CONNECT may reach; empty means 443 only
	// (connect.ports' default).
	ConnectPorts []int
	// RefuseConnect refuses every CONNECT (reason "connect-refused").
	RefuseConnect bool
	// RequireConnectIdentity refuses a CONNECT that is not intercepted
	// when it names no product token (no User-Agent, or none with a
	// crawler token in it) and has no pinned identity (reason
	// "unidentified-tunnel"): such a tunnel would be decided for "/" under
	// the "*" group only, whatever crawler uses it. False: it is decided
	// under "*".
	RequireConnectIdentity bool
	// Mode is how robots.txt denials are acted on for requests whose pin
	// sets no mode; "" means ModeEnforce.
	Mode Mode
	// Usage compares the purposes declared for crawlers with the usage
	// preferences and licenses robots.txt states (see DecideUsage,
	// DecideLicense); the zero value declares none and reads no license.
	Usage UsageOptions
	// Politeness spaces and pauses the requests to be forwarded (see
	// Admit); nil admits every request at once.
	Politeness Politeness
}

// Policy decides requests. It is safe for concurrent use.
type Policy struct {
	opts                 Options
	exempts, allow, deny hostList
	ports                []int
	targets              *targets
}

// New returns a Policy. It keeps no reference to the option slices.
func New(o Options) *Policy {
	p := &Policy{opts: o, exempts: newHostList(o.ExemptHosts), allow: newHostList(o.AllowHosts),
		deny: newHostList(o.DenyHosts), ports: slices.Clone(o.ConnectPorts)}
	p.targets = memo.NewSync[targetKey, *target](targetsMax)
	if len(p.ports) == 0 {
		p.ports = rules.DefaultConnectPorts()
	}
	return p
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
	// Pin is the request's pinned identity (see Authenticate); when its
	// Token is set it overrides the User-Agent.
	Pin Pin
	// Tunnel is the canonical authority of the intercepted CONNECT tunnel
	// the request came in, "" outside one: a request naming another
	// authority is refused (reason bad-request), since the tunnel's checks
	// (port, host lists) were made for its own authority only, and so is
	// a CONNECT (DecideConnect).
	Tunnel string
}

// Identify returns the crawler identity for a User-Agent header value
// (Options.Identifier).
func (p *Policy) Identify(userAgent string) Identity {
	if p.opts.Identifier == nil {
		return Identity{Token: "*", Source: SourceDefault}
	}
	return p.opts.Identifier.Identify(userAgent)
}

// IdentityOf returns the identity a request is decided as, in the
// documented order: a pinned identity (credentials, then client range),
// then User-Agent overrides, then the User-Agent's own product tokens,
// then "*".
func (p *Policy) IdentityOf(r Request) Identity {
	if r.Pin.Token != "" {
		return r.Pin.Identity()
	}
	return p.Identify(r.UserAgent)
}

// Decide returns the decision for a request. It fetches the authority's
// robots.txt when the cache holds no fresh result, waiting for at most the
// fetcher's timeout. Unreachable robots.txt files mean complete disallow
// (RFC 9309 2.3.1.4): when in doubt, Decide denies. The path is matched as
// sent and as origins may resolve it, and denied when any reading is
// disallowed (see MatchPath).
//
// Usage preferences and licenses are then decided for the purposes
// declared for the crawler (Options.Usage; see DecideUsage and
// DecideLicense), fetching a license the cache does not hold.
//
// In report mode (Options.Mode, or the request's pinned mode) a denial
// that robots.txt makes is returned with ReportOnly set: the proxy
// forwards the request and audits the denial (Decision.ReportOnly).
func (p *Policy) Decide(ctx context.Context, r Request) Decision {
	d := p.decide(ctx, r)
	p.decideUsage(ctx, &d, r)
	p.markReportOnly(&d, r.Pin)
	return d
}

// markReportOnly sets d.ReportOnly: true only for a robots.txt denial of
// a request whose mode is report.
func (p *Policy) markReportOnly(d *Decision, pin Pin) {
	mode := pin.Mode
	if mode == "" {
		mode = p.opts.Mode
	}
	d.ReportOnly = !d.Allowed && mode == ModeReport && reportable(d.Reason)
}

// decide is Decide before the mode is applied.
func (p *Policy) decide(ctx context.Context, r Request) Decision {
	d := Decision{Identity: p.IdentityOf(r)}
	t := p.target(r.Scheme, r.Host)
	if r.Tunnel != "" && (t.err != nil || t.authority != r.Tunnel) {
		// Refused before the other authority's robots.txt would be
		// fetched, past the tunnel's port and host checks.
		d.Reason, d.Err = auditlog.ReasonBadRequest, fmt.Errorf("request host %q is not the tunnel's %q", r.Host, r.Tunnel)
		return d
	}
	if t.err != nil {
		d.Reason, d.Err = auditlog.ReasonBadRequest, t.err
		return d
	}
	d.RobotsURL = t.robotsURL
	// The path is matched as sent and as origins resolve it.
	rs := readPath(r.Path)
	switch {
	case t.denied != nil:
		d.Reason, d.Err, d.ResolvedPath = auditlog.ReasonHostDenied, t.denied, rs.resolved
		return d
	case t.exempt:
		d.Allowed, d.Reason, d.ResolvedPath = true, auditlog.ReasonOverride, rs.resolved
		return d
	}
	var a *Access
	if !rs.robotsTxt() { // the implicitly allowed /robots.txt needs no fetch
		if p.opts.Cache != nil {
			var got Access
			got, d.Cache = p.opts.Cache.GetKeyed(ctx, t.key, t.scheme, t.authority)
			a = &got
		}
	}
	out := decideAccess(a, &rs, d.Identity.Candidates)
	out.Identity, out.RobotsURL, out.Cache = d.Identity, d.RobotsURL, d.Cache
	return out
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
	ascii, err := rules.ASCIIHost(host)
	if err != nil {
		return "", "", err
	}
	return scheme, net.JoinHostPort(ascii, port), nil
}

// ClientRange returns the client range (identity.client_ranges) that pins
// client's requests, and false when none does.
func (p *Policy) ClientRange(client netip.Addr) (netip.Prefix, bool) {
	if p.opts.Pinner == nil {
		return netip.Prefix{}, false
	}
	return p.opts.Pinner.RangeOf(client)
}
