package robots

import "strings"

// matchWild reports whether a normalised pattern with "*" wildcards, a final
// "$" end anchor, or both, matches the normalised path from its first octet
// (RFC 9309 2.2.2, 2.2.3).
//
// Each literal segment is placed at its leftmost possible position after the
// previous one. For patterns whose only wildcard is "*", leftmost placement
// never rules out a match that a later placement would allow, so no
// backtracking is needed: the cost is at most O(len(path)) per segment, and
// pathological patterns such as "/*a*a*a*a*b" stay linear.
func matchWild(pat, path string) bool {
	anchored := pat != "" && pat[len(pat)-1] == '$'
	if anchored {
		pat = pat[:len(pat)-1]
	}
	i := strings.IndexByte(pat, '*')
	if i < 0 {
		if anchored {
			return path == pat
		}
		return strings.HasPrefix(path, pat)
	}
	if !strings.HasPrefix(path, pat[:i]) {
		return false
	}
	path, pat = path[i:], pat[i+1:]
	for {
		i = strings.IndexByte(pat, '*')
		if i < 0 {
			break
		}
		if i > 0 {
			j := strings.Index(path, pat[:i])
			if j < 0 {
				return false
			}
			path = path[j+i:]
		}
		pat = pat[i+1:]
	}
	if anchored {
		// The last segment must end the path, after everything placed so far.
		return strings.HasSuffix(path, pat)
	}
	return strings.Contains(path, pat)
}

// Pattern is a path pattern in the syntax of allow and disallow rules (RFC
// 9309 2.2.2, 2.2.3): matched from the first octet of the path, "*" for
// any run of octets, a final "$" to anchor the end, percent-encoding
// normalised on both sides (see NormalizePath). It lets other documents
// that scope by robots.txt paths, such as the content elements of an RSL
// license (package license), match exactly as rules do. The zero Pattern,
// and the pattern of an empty value, match no path, as an empty disallow
// rule does.
type Pattern struct {
	p string // normalised
}

// ParsePattern compiles a pattern value as written ("/docs/*.pdf$").
func ParsePattern(value string) Pattern { return Pattern{p: normalizePattern(value)} }

// String returns the pattern in normal form.
func (p Pattern) String() string { return p.p }

// Len returns the pattern's length in octets in normal form: its
// specificity, by which the longest match wins (RFC 9309 2.2.2).
func (p Pattern) Len() int { return len(p.p) }

// Match reports whether the pattern matches path (a path and query as
// sent, see PathOf; it is normalised here).
func (p Pattern) Match(path string) bool {
	return p.p != "" && matchWild(p.p, NormalizePath(path))
}
