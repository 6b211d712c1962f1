package robots

// This file implements the percent-encoding normalisation of RFC 9309
// section 2.2.2, applied identically to rule patterns and to request paths
// so that the two compare octet by octet.

const upperHex = "0123456789ABCDEF"

// isUnreserved reports whether c is in the RFC 3986 unreserved set:
// ALPHA / DIGIT / "-" / "." / "_" / "~".
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// mustEncode reports whether a literal octet must be percent-encoded before
// comparison: octets outside printable ASCII (RFC 9309 2.2.2: "Octets ...
// outside the range of the ASCII coded character set ... MUST be
// percent-encoded"), the space, and DEL.
func mustEncode(c byte) bool {
	return c <= 0x20 || c >= 0x7F
}

// normMode says which side of the comparison a string is on.
type normMode uint8

const (
	// modePath normalises a request path: "*" and "$" are ordinary octets
	// and are encoded as %2A and %24, so that a pattern can match them
	// literally only when it writes them percent-encoded (RFC 9309 2.2.3).
	modePath normMode = iota
	// modePattern normalises a rule pattern: "*" is the wildcard and a
	// final "$" the end anchor; a "$" anywhere else is literal (%24).
	modePattern
)

// NormalizePath returns the form of a request path (with its query, if any)
// that RFC 9309 rules are compared against (section 2.2.2):
//
//   - a percent-encoded unreserved octet (ALPHA, DIGIT, "-", ".", "_", "~")
//     is decoded: "%62%61%7A" becomes "baz";
//   - any other percent-encoded octet stays encoded with upper-case hex:
//     "%2f" becomes "%2F", "%e3%83%84" becomes "%E3%83%84";
//   - octets outside printable ASCII, space and DEL are percent-encoded:
//     "ツ" (E3 83 84) becomes "%E3%83%84";
//   - a "%" not followed by two hex digits is a literal percent sign and is
//     encoded as "%25";
//   - "*" and "$" are encoded as "%2A" and "%24" (RFC 9309 2.2.3), since in
//     a pattern the bare characters are special;
//   - an empty path becomes "/".
//
// The result is idempotent: NormalizePath(NormalizePath(p)) ==
// NormalizePath(p). When p is already normal it is returned as is, without
// allocating.
func NormalizePath(p string) string {
	if p == "" {
		return "/"
	}
	return normalize(p, modePath)
}

// normalizePattern is NormalizePath for the value of an allow or disallow
// rule: "*" stays the wildcard and a final "$" stays the end anchor.
func normalizePattern(p string) string {
	return normalize(p, modePattern)
}

// normalize rewrites s per mode, returning s itself when nothing changes.
func normalize(s string, mode normMode) string {
	i := firstChange(s, mode)
	if i == len(s) {
		return s
	}
	buf := make([]byte, 0, len(s)+16)
	buf = append(buf, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			hi, ok1 := unhexAt(s, i+1)
			lo, ok2 := unhexAt(s, i+2)
			if !ok1 || !ok2 {
				buf = append(buf, "%25"...)
				continue
			}
			v := hi<<4 | lo
			if isUnreserved(v) {
				buf = append(buf, v)
			} else {
				buf = append(buf, '%', upperHex[v>>4], upperHex[v&15])
			}
			i += 2
		case mustEncode(c) || encodesSpecial(s, i, mode):
			buf = append(buf, '%', upperHex[c>>4], upperHex[c&15])
		default:
			buf = append(buf, c)
		}
	}
	return string(buf)
}

// firstChange returns the index of the first octet of s that normalize
// would rewrite, or len(s) if s is already normal.
func firstChange(s string, mode normMode) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			hi, ok1 := unhexAt(s, i+1)
			lo, ok2 := unhexAt(s, i+2)
			if !ok1 || !ok2 || isUnreserved(hi<<4|lo) || isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
				return i
			}
			i += 2
			continue
		}
		if mustEncode(c) || encodesSpecial(s, i, mode) {
			return i
		}
	}
	return len(s)
}

// encodesSpecial reports whether s[i], a "*" or "$", is an ordinary octet
// in this mode and so must be written percent-encoded.
func encodesSpecial(s string, i int, mode normMode) bool {
	switch s[i] {
	case '*':
		return mode == modePath
	case '$':
		return mode == modePath || i != len(s)-1
	}
	return false
}

func unhexAt(s string, i int) (byte, bool) {
	if i >= len(s) {
		return 0, false
	}
	return unhex(s[i])
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }
