package license

import (
	"net"
	"strings"
)

// Match returns the content element that applies to a request for path
// (path and query as sent) at host (the request's host, with or without
// port): the one whose url pattern matches the path with the most octets
// (RFC 9309 2.2.2), the first of equally long ones; nil when none does.
func (l *License) Match(host, path string) *Content {
	h := hostname(host)
	var best *Content
	for i := range l.Contents {
		c := &l.Contents[i]
		if c.host != "" && c.host != h || !c.pattern.Match(path) {
			continue
		}
		if best == nil || c.pattern.Len() > best.pattern.Len() {
			best = c
		}
	}
	return best
}

// hostname returns host without port, lower-cased.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// Permits reports whether the content's licenses permit purpose (a
// purpose of package usage): see the package documentation's terms.
// Purposes outside package usage's are not permitted.
func (c *Content) Permits(purpose string) bool {
	bit := purposeBit(purpose)
	if bit == 0 {
		return false
	}
	if len(c.terms) == 0 {
		return true
	}
	for _, t := range c.terms {
		if t.prohibits&bit == 0 && (!t.hasPermits || t.permits&bit != 0) {
			return true
		}
	}
	return false
}

// Element returns the content element as the audit line shows it:
// `<content url="/docs/*">`, with its server attribute when it has one.
func (c *Content) Element() string {
	var b strings.Builder
	b.WriteString(`<content url="`)
	b.WriteString(c.URL)
	b.WriteString(`"`)
	if c.Server != "" {
		b.WriteString(` server="`)
		b.WriteString(c.Server)
		b.WriteString(`"`)
	}
	b.WriteString(">")
	return b.String()
}
