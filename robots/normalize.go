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
	if plainPath(p) {
		return p
	}
	return normalize(p, modePath)
}

// plainPath reports whether p holds none of the octets special8 flags, so
// that it is normal as it is: the common case, checked 8 octets at a time.
func plainPath(p string) bool {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if special8(load8(p, i)) != 0 {
			return false
		}
	}
	switch {
	case i == len(p):
		return true
	case len(p) >= 8:
		// The last word overlaps octets already checked: they are plain.
		return special8(load8(p, len(p)-8)) == 0
	}
	return special8(load8pad(p))&masks[len(p)] == 0
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
// would rewrite, or len(s) if s is already normal. Runs of ordinary octets
// are skipped 8 at a time (see special8).
func firstChange(s string, mode normMode) int {
	for i := 0; i < len(s); {
		var m uint64
		switch {
		case i+8 <= len(s):
			m = special8(load8(s, i))
		case len(s) >= 8:
			// The last 1 to 7 octets: the word ending the string, shifted
			// so that s[i] comes first. Flags of the octets already passed
			// are shifted out; those above them may be false positives,
			// which the octet-wise check below clears.
			m = special8(load8(s, len(s)-8)) >> (8 * (8 - (len(s) - i)))
		default:
			m = (special8(load8pad(s)) & masks[len(s)]) >> (8 * i)
		}
		if m == 0 {
			i += 8
			continue
		}
		i += firstFlagged(m)
		c := s[i]
		if c == '%' {
			hi, ok1 := unhexAt(s, i+1)
			lo, ok2 := unhexAt(s, i+2)
			if !ok1 || !ok2 || isUnreserved(hi<<4|lo) || isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
				return i
			}
			i += 3
			continue
		}
		if mustEncode(c) || encodesSpecial(s, i, mode) {
			return i
		}
		i++
	}
	return len(s)
}

// special8 flags (0x80) the octets of a word that normalize may have to
// look at: those mustEncode reports (at most 0x20, at least 0x7F), "%",
// "$" and "*". Every flag is exact: the additions work on 7-bit values and
// never carry from one octet to the next.
func special8(x uint64) uint64 {
	y := x &^ hi8
	bad := x | (y + lo8) | ^(y + (0x80-0x21)*lo8) // >= 0x80, 0x7F, < 0x21
	dollarPct := ^((y^0x24*lo8)&^lo8 + 0x7F*lo8)  // 0x24, 0x25
	star := ^((y ^ 0x2A*lo8) + 0x7F*lo8)          // 0x2A
	return (bad | dollarPct | star) & hi8
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

// Edits record how a rule's value was written where it differs from its
// normalised pattern, so that the value can be rebuilt exactly (see
// Rule.Text) without storing it twice. An edit is a varint delta<<1 | more,
// where delta counts the pattern octets copied unchanged since the previous
// edit. With more clear, the pattern's "%XY" there was written as the single
// octet 0xXY (an octet outside printable ASCII, a space, a "$" that is not
// last, or a "%" that does not start an escape): the commonest edit takes
// one octet. With more set, a kind octet follows:
//
//   - 1 to 4: the pattern's unreserved octet c was written "%hh"; bit 1 of
//     kind-1 says the first hex digit was lower case, bit 0 the second;
//   - 5 to 7: the pattern's "%XY" was written with lower-case hex digits;
//     bits 1 and 0 of kind-4 say which.
const (
	editRaw        = 0
	editUnreserved = 1
	editLowerHex   = 4
)

// appendPattern appends the normalised form of a rule value (as
// normalizePattern) to dst, and the edits that rebuild the value from it to
// edits.
func appendPattern(dst, edits []byte, v string) ([]byte, []byte) {
	start := len(dst)
	i := firstChange(v, modePattern)
	dst = append(dst, v[:i]...)
	prev := 0 // pattern offset just past the previous edit
	edit := func(pos, span int, kind byte) {
		if kind == editRaw {
			edits = appendUvarint(edits, uint64(pos-prev)<<1)
		} else {
			edits = appendUvarint(edits, uint64(pos-prev)<<1|1)
			edits = append(edits, kind)
		}
		prev = pos + span
	}
	for ; i < len(v); i++ {
		c := v[i]
		pos := len(dst) - start
		switch {
		case c == '%':
			hi, ok1 := unhexAt(v, i+1)
			lo, ok2 := unhexAt(v, i+2)
			if !ok1 || !ok2 {
				dst = append(dst, "%25"...)
				edit(pos, 3, editRaw)
				continue
			}
			caseBits := byte(0)
			if isLowerHex(v[i+1]) {
				caseBits |= 2
			}
			if isLowerHex(v[i+2]) {
				caseBits |= 1
			}
			b := hi<<4 | lo
			if isUnreserved(b) {
				dst = append(dst, b)
				edit(pos, 1, editUnreserved+caseBits)
			} else {
				dst = append(dst, '%', upperHex[b>>4], upperHex[b&15])
				if caseBits != 0 {
					edit(pos, 3, editLowerHex+caseBits)
				}
			}
			i += 2
		case mustEncode(c) || encodesSpecial(v, i, modePattern):
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			edit(pos, 3, editRaw)
		default:
			dst = append(dst, c)
		}
	}
	return dst, edits
}

// denormalize rebuilds a rule value as written from its normalised pattern
// and the edits appendPattern recorded.
func denormalize(pattern, edits string) string {
	b := make([]byte, 0, len(pattern)+8)
	pos := 0
	for j := 0; j < len(edits); {
		var e int
		e, j = uvarint(edits, j)
		d, kind := e>>1, byte(editRaw)
		if e&1 != 0 {
			kind = edits[j]
			j++
		}
		b = append(b, pattern[pos:pos+d]...)
		pos += d
		switch {
		case kind == editRaw:
			hi, _ := unhex(pattern[pos+1])
			lo, _ := unhex(pattern[pos+2])
			b = append(b, hi<<4|lo)
			pos += 3
		case kind < editLowerHex+1:
			c := pattern[pos]
			bits := kind - editUnreserved
			b = append(b, '%', hexCase(upperHex[c>>4], bits&2 != 0), hexCase(upperHex[c&15], bits&1 != 0))
			pos++
		default:
			bits := kind - editLowerHex
			b = append(b, '%', hexCase(pattern[pos+1], bits&2 != 0), hexCase(pattern[pos+2], bits&1 != 0))
			pos += 3
		}
	}
	b = append(b, pattern[pos:]...)
	return string(b)
}

// hexCase returns the upper-case hex digit c, lower-cased if lower is set.
func hexCase(c byte, lower bool) byte {
	if lower && 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}
