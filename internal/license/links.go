package license

import (
	"sync"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/heapsize"
	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// Bounds of the memory of licenses named by Link header fields (see
// Source.RememberLink): entries, and octets as linkSize accounts them.
const (
	// MaxLinks is the number of resources whose Link-named license is
	// remembered; the least recently used is forgotten first.
	MaxLinks = 65_536
	// MaxLinkBytes bounds the octets the remembered resources and license
	// URLs take: 16 MiB.
	MaxLinkBytes = 16 << 20
	// linkOverhead is the fixed cost accounted per entry: the LRU node
	// (key, URL and expiry, 80 octets) and its map slot (about 40).
	linkOverhead = 128
)

// links remembers, per resource (canonical authority and path), the
// license URL a response named in a Link header field, for a TTL. It is
// safe for concurrent use.
type links struct {
	mu  sync.Mutex
	lru *memo.LRU[string, linkEntry]
	ttl time.Duration
	now func() time.Time
}

// linkEntry is a remembered license URL and when it is forgotten.
type linkEntry struct {
	url     string
	expires time.Time
}

// linkSize accounts an entry in octets: its resource and URL strings as
// the allocator takes them (heapsize.String), and linkOverhead.
// TestLinksAccountHeap compares it with the live heap.
func linkSize(k string, v linkEntry) int64 {
	return int64(heapsize.String(k) + heapsize.String(v.url) + linkOverhead)
}

// newLinks returns an empty links whose entries live ttl on the clock now.
func newLinks(ttl time.Duration, now func() time.Time) *links {
	if now == nil {
		now = time.Now
	}
	return &links{lru: memo.NewLRU[string, linkEntry](MaxLinks, MaxLinkBytes, linkSize), ttl: ttl, now: now}
}

// put remembers url for resource; url "" forgets resource.
func (l *links) put(resource, url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if url == "" {
		l.lru.Remove(resource)
		return
	}
	l.lru.Add(resource, linkEntry{url: url, expires: l.now().Add(l.ttl)}, nil)
}

// get returns the license URL remembered for resource, "" when none is or
// it expired (and is then forgotten).
func (l *links) get(resource string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.lru.Get(resource)
	if !ok {
		return ""
	}
	if !l.now().Before(e.expires) {
		l.lru.Remove(resource)
		return ""
	}
	return e.url
}

// len returns the number of remembered resources.
func (l *links) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
