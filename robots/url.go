package robots

import "strings"

// PathOf returns the part of a URL that robots.txt rules are matched
// against: the path and the query, without scheme, authority and fragment
// (RFC 9309 2.2.2). "http://example.com/a/b?c#d" gives "/a/b?c"; a URL with
// an empty path gives "/"; a string that starts with "/" is taken as a path
// already. It does no normalisation (see NormalizePath) and never fails:
// unlike net/url it accepts the malformed escapes found in the wild, which
// NormalizePath then handles consistently.
func PathOf(rawURL string) string {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
		return s
	}
	if i := strings.Index(s, "://"); i >= 0 && isScheme(s[:i]) {
		s = s[i+3:]
	} else if strings.HasPrefix(s, "//") {
		s = s[2:]
	}
	i := strings.IndexAny(s, "/?")
	switch {
	case i < 0:
		return "/"
	case s[i] == '?':
		return "/" + s[i:]
	}
	return s[i:]
}

// isScheme reports whether s is an RFC 3986 scheme:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !alpha && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}
