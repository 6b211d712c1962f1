//go:build !(amd64 || arm64 || 386 || ppc64le || loong64)

package robots

// load8Unchecked returns the 8 octets of s at i as a little-endian word,
// octet by octet, for architectures that are big-endian or do not load
// unaligned words. The caller guarantees i+8 <= len(s).
func load8Unchecked(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
