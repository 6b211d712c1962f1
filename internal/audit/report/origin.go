package report

import (
	"bytes"
	"fmt"
	"net"
	"strings"

	"github.com/robotsproxy/robotsproxy/policy"
)

// site is where a request went: its origin (scheme and authority, the
// key robots.txt applies to, RFC 9309 2.3) as the proxy keys it.
type site struct {
	// origin is "scheme://authority" without the scheme's default port
	// (policy.Origin), or the url's authority as written, lower-cased,
	// when it does not read as an http or https authority.
	origin string
	// authority is policy.Authority's host:port (default port filled
	// in), "" when the url did not read as one.
	authority string
	// host is the origin's host name (see hostOf).
	host string
}

// maxSites and maxSiteBytes bound the memo of raw authorities to sites,
// in entries and in the octets of their strings (plus siteOverhead an
// entry); it is emptied when either is reached.
const (
	maxSites     = 16384
	maxSiteBytes = 4 << 20
	siteOverhead = 96
)

// sites memoises siteOf by the url's raw "scheme://authority" octets, so
// that the canonicalisation (policy.Authority) runs once per spelling.
type sites struct {
	m     map[string]site
	bytes int
}

// of returns the site of an audit url: an absolute URL, or the
// authority-form target of a CONNECT (policy.ConnectAuthority decides its
// scheme).
func (s *sites) of(u []byte) site {
	raw := rawAuthority(u)
	if st, ok := s.m[string(raw)]; ok {
		return st
	}
	st := siteOf(string(raw))
	size := len(raw) + len(st.origin) + len(st.authority) + len(st.host) + siteOverhead
	if s.m == nil || len(s.m) >= maxSites || s.bytes+size > maxSiteBytes {
		s.m, s.bytes = make(map[string]site, 64), 0
	}
	s.m[string(raw)] = st
	s.bytes += size
	return st
}

// rawAuthority cuts an audit url after its authority and drops userinfo:
// "https://u@Host:8443/x" gives "https://Host:8443".
func rawAuthority(u []byte) []byte {
	scheme := 0
	if i := bytes.Index(u, []byte("://")); i >= 0 {
		scheme = i + 3
	}
	if i := bytes.IndexAny(u[scheme:], "/?#"); i >= 0 {
		u = u[:scheme+i]
	}
	if i := bytes.LastIndexByte(u[scheme:], '@'); i >= 0 {
		u = append(u[:scheme:scheme], u[scheme+i+1:]...)
	}
	return u
}

func siteOf(raw string) site {
	scheme, hostport, ok := strings.Cut(raw, "://")
	var (
		auth string
		err  error
	)
	if ok {
		scheme, auth, err = policy.Authority(scheme, hostport)
	} else {
		scheme, auth, err = policy.ConnectAuthority(raw)
	}
	st := site{origin: strings.ToLower(raw)}
	if err == nil {
		st = site{origin: policy.Origin(scheme, auth), authority: auth}
	}
	st.host = string(hostOf(nil, []byte(st.origin)))
	return st
}

// hostFilter is -host: an origin ("https://example.com:8443"), an
// authority with a port ("example.com:8443", any scheme), or a host name
// (every scheme and port).
type hostFilter struct {
	origin, authority, host string
}

// parseHostFilter reads -host. Errors are a value that names no http or
// https site.
func parseHostFilter(v string) (hostFilter, error) {
	if v == "" {
		return hostFilter{}, nil
	}
	if scheme, hp, ok := strings.Cut(v, "://"); ok {
		s, auth, err := policy.Authority(scheme, strings.TrimSuffix(hp, "/"))
		if err != nil {
			return hostFilter{}, fmt.Errorf("host %q: %w", v, err)
		}
		return hostFilter{origin: policy.Origin(s, auth)}, nil
	}
	if _, _, err := net.SplitHostPort(v); err == nil {
		_, auth, err := policy.Authority("https", v)
		if err != nil {
			return hostFilter{}, fmt.Errorf("host %q: %w", v, err)
		}
		return hostFilter{authority: auth}, nil
	}
	_, auth, err := policy.Authority("https", v)
	if err != nil {
		return hostFilter{}, fmt.Errorf("host %q: %w", v, err)
	}
	return hostFilter{host: string(hostOf(nil, []byte(auth)))}, nil
}

func (f hostFilter) set() bool { return f != hostFilter{} }

// keep reports whether a line of site st passes.
func (f hostFilter) keep(st site) bool {
	switch {
	case f.origin != "":
		return st.origin == f.origin
	case f.authority != "":
		return st.authority == f.authority
	case f.host != "":
		return st.host == f.host
	}
	return true
}
