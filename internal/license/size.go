package license

import (
	"strings"
	"unsafe"

	"github.com/robotsproxy/robotsproxy/internal/heapsize"
)

// Retained size of a parsed license: what the cache charges for it
// (policy.Document.Retained), so that cache.max_bytes bounds the memory
// licenses keep whatever their shape. A license of many small content
// elements keeps several times its document's size (a Content is 88
// octets, and its strings are allocated one by one); TestRetainedMatchesHeap
// compares the figure with the live heap.

// retainedSize returns the octets l keeps live: the License, the array of
// its contents (with the allocator's rounding), and each content's own
// allocations: its url and server strings, its host and pattern when they
// are not part of its url, and its terms.
func retainedSize(l *License) int {
	n := heapsize.Pointers(int(unsafe.Sizeof(License{})))
	n += heapsize.Slice(cap(l.Contents), int(unsafe.Sizeof(Content{})), true)
	for i := range l.Contents {
		c := &l.Contents[i]
		n += heapsize.String(c.URL) + heapsize.String(c.Server)
		if !within(c.host, c.URL) {
			n += heapsize.String(c.host)
		}
		if p := c.pattern.String(); !within(p, c.URL) {
			n += heapsize.String(p)
		}
		n += heapsize.Slice(cap(c.terms), int(unsafe.Sizeof(terms{})), false)
	}
	return n
}

// within reports whether s is empty or its octets lie inside base's (it
// then takes no allocation of its own).
func within(s, base string) bool {
	if s == "" {
		return true
	}
	if base == "" {
		return false
	}
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(base)))
	return p >= b && p+uintptr(len(s)) <= b+uintptr(len(base))
}

// trimmed returns s without its leading and trailing white space, in an
// allocation of its own when anything was trimmed: a substring would keep
// the whole attribute value live.
func trimmed(s string) string {
	t := strings.TrimSpace(s)
	if len(t) == len(s) {
		return s
	}
	return strings.Clone(t)
}

// ownedBy returns s, copied unless it lies inside base: a host taken from
// a parsed URL may share a larger allocation of the URL parser.
func ownedBy(s, base string) string {
	if within(s, base) {
		return s
	}
	return strings.Clone(s)
}
