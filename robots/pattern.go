package robots

import "strings"

// pattern is a compiled rule path: the normalised pattern split at each "*"
// wildcard into literal segments, with the "$" end anchor taken off.
type pattern struct {
	// segs are the literal segments between wildcards, in order. A pattern
	// without "*" has one segment; "/a*b*" has "/a", "b" and "".
	segs []string
	// anchored is true when the pattern ends with "$" (RFC 9309 2.2.3).
	anchored bool
}

// compilePattern compiles a normalised pattern (see normalizePattern).
func compilePattern(p string) pattern {
	anchored := strings.HasSuffix(p, "$")
	if anchored {
		p = p[:len(p)-1]
	}
	return pattern{segs: strings.Split(p, "*"), anchored: anchored}
}

// match reports whether the pattern matches the normalised path, starting at
// its first octet (RFC 9309 2.2.2).
//
// Each literal segment is placed at its leftmost possible position after the
// previous one. For patterns whose only wildcard is "*", leftmost placement
// never rules out a match that a later placement would allow, so no
// backtracking is needed: the cost is at most O(len(path)) per segment, and
// pathological patterns such as "/*a*a*a*a*b" stay linear.
func (p *pattern) match(path string) bool {
	first := p.segs[0]
	if !strings.HasPrefix(path, first) {
		return false
	}
	if len(p.segs) == 1 {
		return !p.anchored || len(path) == len(first)
	}
	rest := path[len(first):]
	last := len(p.segs) - 1
	for _, seg := range p.segs[1:last] {
		j := strings.Index(rest, seg)
		if j < 0 {
			return false
		}
		rest = rest[j+len(seg):]
	}
	if p.anchored {
		// The last segment must end the path, after everything placed so far.
		return strings.HasSuffix(rest, p.segs[last])
	}
	return strings.Contains(rest, p.segs[last])
}
