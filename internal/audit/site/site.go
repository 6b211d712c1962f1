// Package site names where an audit line's request went, as the proxy
// keys it: its origin (scheme and authority, the key robots.txt applies
// to, RFC 9309 2.3), its authority and its host name; and the one
// reading of a site a user types (-host of audit report and watch,
// host= of the live view): an origin, an authority or a host name.
package site

import (
	"bytes"
	"fmt"
	"net"
	"strings"

	"github.com/robotsproxy/robotsproxy/policy"
)

// Site is where a request went.
type Site struct {
	// Origin is "scheme://authority" without the scheme's default port
	// (policy.Origin), or the url's authority as written, lower-cased,
	// when it does not read as an http or https authority.
	Origin string
	// Authority is policy.Authority's host:port (default port filled
	// in), "" when the url did not read as one.
	Authority string
	// Host is the origin's host name (see AppendHost).
	Host string
}

// Of returns the site of an audit url: an absolute URL, or the
// authority-form target of a CONNECT (policy.ConnectAuthority decides its
// scheme).
func Of(u []byte) Site { return ofRaw(string(RawAuthority(u))) }

// ofRaw is the site of a url cut by RawAuthority.
func ofRaw(raw string) Site {
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
	st := Site{Origin: strings.ToLower(raw)}
	if err == nil {
		st = Site{Origin: policy.Origin(scheme, auth), Authority: auth}
	}
	st.Host = string(AppendHost(nil, []byte(st.Origin)))
	return st
}

// maxSites and maxSiteBytes bound Memo, in entries and in the octets of
// their strings (plus siteOverhead an entry); it is emptied when either
// is reached.
const (
	maxSites     = 16384
	maxSiteBytes = 4 << 20
	siteOverhead = 96
)

// Memo memoises Of by the url's raw "scheme://authority" octets, so that
// the canonicalisation (policy.Authority) runs once per spelling. It
// holds at most 16384 sites and 4 MiB. The zero value is ready to use; it
// is not safe for concurrent use.
type Memo struct {
	m     map[string]Site
	bytes int
}

// Of is Of, memoised.
func (s *Memo) Of(u []byte) Site {
	raw := RawAuthority(u)
	if st, ok := s.m[string(raw)]; ok {
		return st
	}
	st := ofRaw(string(raw))
	size := len(raw) + len(st.Origin) + len(st.Authority) + len(st.Host) + siteOverhead
	if s.m == nil || len(s.m) >= maxSites || s.bytes+size > maxSiteBytes {
		s.m, s.bytes = make(map[string]Site, 64), 0
	}
	s.m[string(raw)] = st
	s.bytes += size
	return st
}

// RawAuthority cuts an audit url after its authority and drops userinfo:
// "https://u@Host:8443/x" gives "https://Host:8443". It may reuse u's
// octets.
func RawAuthority(u []byte) []byte {
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

// AppendHost appends to dst the host of an audit url: the authority of an
// absolute URL, or of "host:port" (CONNECT), without userinfo or port, in
// lower case; IPv6 literals keep their brackets.
func AppendHost(dst, u []byte) []byte {
	if i := bytes.Index(u, []byte("://")); i >= 0 {
		u = u[i+3:]
	}
	if i := bytes.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := bytes.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	if len(u) > 0 && u[0] == '[' {
		if i := bytes.IndexByte(u, ']'); i >= 0 {
			u = u[:i+1]
		}
	} else if i := bytes.IndexByte(u, ':'); i >= 0 {
		u = u[:i]
	}
	for _, c := range u {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Filter keeps the lines of one site, as a user names it: an origin
// ("https://example.com:8443"), an authority with a port
// ("example.com:8443", any scheme), or a host name ("example.com", every
// scheme and port). The zero Filter keeps every line.
type Filter struct {
	origin, authority, host string
}

// ParseFilter reads a site as a user types it (see Filter); "" is the
// zero Filter. The error names a value that is no http or https site.
func ParseFilter(v string) (Filter, error) {
	if v == "" {
		return Filter{}, nil
	}
	if scheme, hp, ok := strings.Cut(v, "://"); ok {
		s, auth, err := policy.Authority(scheme, strings.TrimSuffix(hp, "/"))
		if err != nil {
			return Filter{}, fmt.Errorf("host %q: %w", v, err)
		}
		return Filter{origin: policy.Origin(s, auth)}, nil
	}
	if _, _, err := net.SplitHostPort(v); err == nil {
		_, auth, err := policy.Authority("https", v)
		if err != nil {
			return Filter{}, fmt.Errorf("host %q: %w", v, err)
		}
		return Filter{authority: auth}, nil
	}
	_, auth, err := policy.Authority("https", v)
	if err != nil {
		return Filter{}, fmt.Errorf("host %q: %w", v, err)
	}
	return Filter{host: string(AppendHost(nil, []byte(auth)))}, nil
}

// Keep reports whether a line of site st passes.
func (f Filter) Keep(st Site) bool {
	switch {
	case f.origin != "":
		return st.Origin == f.origin
	case f.authority != "":
		return st.Authority == f.authority
	case f.host != "":
		return st.Host == f.host
	}
	return true
}
