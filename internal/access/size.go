package access

import (
	"unsafe"

	"github.com/robotsproxy/robotsproxy/internal/heapsize"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Cache size accounting (see CacheOptions.MaxBytes). An entry is accounted
// as entryOverhead, plus its key, the strings and error text of its access
// results, each rounded up to its allocation size class (package
// heapsize), and their compiled rules or parsed documents.
// TestCacheAccountsRetainedBytes checks the sum against the heap that
// entries really keep.
const (
	// entryOverhead is what one cached authority takes besides its
	// strings, errors and rules: the entry (272 octets on 64-bit
	// platforms, in the 288-octet size class), the eviction node (48),
	// and its slots in go-cache's map and in the cache's own index (about
	// 110 to 130, maps being 60-90% full).
	entryOverhead = 464
	// robotsOverhead is a robots.Robots value, besides its arena.
	robotsOverhead = 64
	// errOverhead is an error value's allocation beyond its text.
	errOverhead = 16
)

// entrySize returns the octets e, filed under key, keeps live. A stale
// entry keeps the earlier successful result it stands in with.
func entrySize(key string, e *entry) int64 {
	n := int64(entryOverhead) + strSize(key) + accessSize(&e.latest)
	if e.good != nil && e.good != &e.latest {
		n += accessSize(e.good)
	}
	return n
}

// accessSize returns the octets an Access refers to, beyond its own
// fields, once the cache has trimmed it (see Cache.store).
func accessSize(a *policy.Access) int64 {
	n := strSize(a.URL)
	if unsafe.StringData(a.FinalURL) != unsafe.StringData(a.URL) {
		n += strSize(a.FinalURL)
	}
	if a.Err != nil {
		n += errOverhead + strSize(a.Err.Error())
	}
	if a.Robots != nil {
		n += robotsOverhead + robotsRetained(a.Robots)
	}
	if a.Doc != nil {
		n += int64(a.Doc.Retained())
	}
	return n
}

// strSize returns the octets s's own allocation takes (heapsize.String).
func strSize(s string) int64 { return int64(heapsize.String(s)) }

// robotsRetained returns the octets a compiled file keeps live beyond the
// robots.Robots value (robotsOverhead): its arena (robots.Robots.Retained).
func robotsRetained(r *robots.Robots) int64 { return int64(r.Retained()) }
