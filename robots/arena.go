package robots

// This file holds the low-level helpers of the compiled form: varints and
// word loads over the arena string, and the SWAR (SIMD within a register)
// byte tests used by the matcher and by NormalizePath.

import "math/bits"

const (
	lo8 = 0x0101010101010101 // 0x01 in every octet
	hi8 = 0x8080808080808080 // 0x80 in every octet
)

// masks[n] keeps the first n octets of a little-endian word.
var masks = [9]uint64{
	0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF,
	0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
}

// load8 returns the 8 octets of s at i as a little-endian word; s must hold
// them (i+8 <= len(s)). See load_fast.go and load_safe.go.
func load8(s string, i int) uint64 {
	_ = s[i+7] // the only bounds check
	return load8Unchecked(s, i)
}

// load8pad returns the first 8 octets of s as a little-endian word, padded
// with zero octets when s is shorter.
func load8pad(s string) uint64 {
	if len(s) >= 8 {
		return load8(s, 0)
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return w
}

// zeroOctets flags (0x80) the octets of x that are zero. The lowest flag is
// always right; flags above it may be false positives (borrow), which is
// enough to find the first such octet or to know there is none.
func zeroOctets(x uint64) uint64 {
	return (x - lo8) &^ x & hi8
}

// firstFlagged returns the index of the lowest flagged octet of a mask from
// zeroOctets, or 8 when none is.
func firstFlagged(m uint64) int {
	return bits.TrailingZeros64(m) >> 3
}

// lower8 lower-cases the ASCII letters of a word of 8 octets.
func lower8(x uint64) uint64 {
	h := x &^ hi8 // 7-bit values: the additions below cannot carry out
	ge := h + (0x80-'A')*lo8
	gt := h + (0x80-'Z'-1)*lo8
	upper := ge &^ gt &^ x & hi8
	return x | upper>>2
}

// appendUvarint appends v as an unsigned LEB128 varint.
func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// uvarint decodes the varint at s[i:], returning its value and the index
// just past it. The arena is built by this package, so s holds it whole.
func uvarint(s string, i int) (int, int) {
	c := s[i]
	if c < 0x80 {
		return int(c), i + 1
	}
	v := int(c & 0x7F)
	for shift := 7; ; shift += 7 {
		i++
		c = s[i]
		v |= int(c&0x7F) << shift
		if c < 0x80 {
			return v, i + 1
		}
	}
}
