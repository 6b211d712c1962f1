//go:build amd64 || arm64 || 386 || ppc64le || loong64

package robots

import "unsafe"

// load8Unchecked returns the 8 octets of s at i as a little-endian word,
// with one unaligned load: these architectures are little-endian and load
// unaligned words. The caller guarantees i+8 <= len(s).
func load8Unchecked(s string, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))
}
