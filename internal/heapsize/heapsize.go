// Package heapsize estimates the octets the Go allocator really takes for
// a value's allocations, so that caches bounded in octets can charge what
// an entry keeps live rather than the length of its data: a small
// allocation is rounded up to its size class, a large one to whole pages,
// and an allocation holding pointers larger than 512 octets carries an
// 8-octet header. The figures are those of the Go runtime's allocator on
// 64-bit platforms (runtime/sizeclasses.go, Go 1.22 and later); the
// caches' tests compare the estimates with the live heap they measure.
package heapsize

// classes are the size classes of the Go allocator, in octets, up to
// maxSmall.
var classes = [...]int{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320,
	352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072,
	3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384,
	18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

const (
	maxSmall     = 32768 // the largest size class
	pageSize     = 8192  // large allocations take whole pages
	headerSize   = 8     // the malloc header of a pointerful object...
	headerAbove  = 512   // ...larger than this
	pointerBytes = 8     // a pointer on 64-bit platforms
)

// Alloc returns the octets an allocation of n octets takes: n rounded up
// to its size class (at most 32 KiB) or to whole 8 KiB pages; 0 for 0.
func Alloc(n int) int {
	if n <= 0 {
		return 0
	}
	if n > maxSmall {
		return (n + pageSize - 1) &^ (pageSize - 1)
	}
	lo, hi := 0, len(classes)-1
	for lo < hi { // the first class >= n
		mid := (lo + hi) / 2
		if classes[mid] >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return classes[lo]
}

// Pointers returns the octets an allocation of n octets that holds
// pointers takes: Alloc with the malloc header of objects over 512
// octets.
func Pointers(n int) int {
	if n > headerAbove && n <= maxSmall {
		n += headerSize
	}
	return Alloc(n)
}

// String returns the octets the allocation of s's data takes, when s has
// one of its own (0 for ""); strings shorter than 16 octets may share a
// 16-octet block with others (the tiny allocator): each is charged at
// least its own size class.
func String(s string) int { return Alloc(len(s)) }

// Slice returns the octets the backing array of a slice of capacity
// capacity of elem-octet elements takes (pointers: whether the elements
// hold pointers).
func Slice(capacity, elem int, pointers bool) int {
	if pointers {
		return Pointers(capacity * elem)
	}
	return Alloc(capacity * elem)
}

// PointerSize is the size of a pointer, a string's data pointer and a
// slice's, in octets.
const PointerSize = pointerBytes
