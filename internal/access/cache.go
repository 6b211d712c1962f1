package access

import (
	"context"
	"sync"
	"time"

	gocache "github.com/patrickmn/go-cache"
	"golang.org/x/sync/singleflight"

	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Off, as the value of a CacheOptions duration whose zero value means its
// default, switches that option off: MinTTL Off is no minimum, StaleFor Off
// never lets a stale copy stand in.
const Off time.Duration = -1

// CacheOptions configure a Cache. Zero values mean the defaults; see Off.
type CacheOptions struct {
	// MaxEntries bounds the number of cached authorities; the oldest entry
	// is evicted first. Default DefaultCacheMaxEntries.
	MaxEntries int
	// MaxBytes bounds the memory the cached entries retain, in octets, as
	// entrySize accounts it (compiled rules, URLs, error texts and a fixed
	// per-entry overhead); the oldest entries are evicted first. The
	// newest entry is always kept, so one entry larger than MaxBytes is
	// cached alone. Default DefaultCacheMaxBytes.
	MaxBytes int64
	// TTLRules say how long a result stays fresh (RFC 9309 2.4).
	TTLRules
	// StaleFor is how long a successful copy may stand in while its host is
	// unreachable (RFC 9309 2.3.1.4 gives 30 days as an example). Default
	// 24h; Off never serves a stale copy, so an unreachable host is
	// completely disallowed at once (RFC 9309 2.3.1.4).
	StaleFor time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// DefaultCacheMaxBytes is CacheOptions.MaxBytes when it is 0: 512 MiB
// (rules.DefaultCacheMaxBytes, the default of cache.max_bytes).
const DefaultCacheMaxBytes = rules.DefaultCacheMaxBytes

// DefaultCacheMaxEntries is CacheOptions.MaxEntries when it is 0: 500,000
// authorities (rules.DefaultCacheMaxEntries, the default of
// cache.max_entries).
const DefaultCacheMaxEntries = rules.DefaultCacheMaxEntries

func (o *CacheOptions) setDefaults() {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultCacheMaxEntries
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultCacheMaxBytes
	}
	o.TTLRules = o.TTLRules.WithDefaults()
	switch {
	case o.StaleFor == 0:
		o.StaleFor = 24 * time.Hour
	case o.StaleFor < 0:
		o.StaleFor = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// FetchFunc fetches scheme://authority/robots.txt; Fetcher.Fetch is one.
type FetchFunc func(ctx context.Context, scheme, authority string) policy.Access

// entry is what the cache holds for one authority: compiled rules, never
// the text.
type entry struct {
	latest  policy.Access  // the newest fetch
	fresh   time.Time      // refetch after this
	good    *policy.Access // the newest successful fetch, for unreachable spells
	goodAt  time.Time      // when good was fetched
	staleOK bool           // latest is unreachable and good stands in
}

// inForce returns the access result decisions use, and the cache state.
func (e *entry) inForce(fetched bool) (policy.Access, policy.CacheState) {
	switch {
	case e.staleOK:
		return *e.good, policy.CacheStale
	case fetched:
		return e.latest, policy.CacheMiss
	}
	return e.latest, policy.CacheHit
}

// Cache holds access results per authority (scheme, host and port) in
// go-cache, coalesces concurrent misses for one authority into one fetch,
// and bounds the number of authorities and the memory they retain. It is
// safe for concurrent use.
type Cache struct {
	opts    CacheOptions
	fetch   FetchFunc
	items   *gocache.Cache
	flights singleflight.Group

	mu    sync.Mutex
	order *memo.LRU[string, int64] // key -> its entry's size, in the order stored
}

// NewCache returns a Cache that calls fetch on misses.
func NewCache(fetch FetchFunc, o CacheOptions) *Cache {
	o.setDefaults()
	c := &Cache{opts: o, fetch: fetch,
		order: memo.NewLRU(o.MaxEntries, o.MaxBytes, func(_ string, size int64) int64 { return size })}
	c.items = gocache.New(o.MaxTTL+o.StaleFor, 10*time.Minute)
	c.items.OnEvicted(func(key string, _ any) { c.forget(key) })
	return c
}

// Get returns the access result in force for scheme://authority, fetching
// it when it is missing or no longer fresh. The fetch runs detached from
// ctx's cancellation so that one caller giving up does not fail the others
// waiting on the same fetch. The result has no Raw body and no Header:
// the cache keeps neither (see store).
func (c *Cache) Get(ctx context.Context, scheme, authority string) (policy.Access, policy.CacheState) {
	return c.GetKeyed(ctx, policy.CacheKey(scheme, authority), scheme, authority)
}

// GetKeyed is Get with the key already made by Key(scheme, authority): a
// caller that remembers the key per authority spares its allocation.
func (c *Cache) GetKeyed(ctx context.Context, key, scheme, authority string) (policy.Access, policy.CacheState) {
	if e := c.fresh(key); e != nil {
		return e.inForce(false)
	}
	v, _, _ := c.flights.Do(key, func() (any, error) {
		if e := c.fresh(key); e != nil {
			return e, nil // a flight that just ended stored it
		}
		a := c.fetch(context.WithoutCancel(ctx), scheme, authority)
		return c.store(key, a), nil
	})
	return v.(*entry).inForce(true)
}

// ForgetUnreachable ends every cached unreachable result now, so that
// the next request to each of those authorities fetches robots.txt again
// instead of being refused until cache.unreachable_retry runs out: after
// the operator fixed what made them unreachable (a configuration reload).
// An earlier successful copy that stands in for one (stale) is kept, and
// keeps standing in should the next fetch fail again. It returns how
// many results it ended. A fetch that ends meanwhile may be ended too: it
// is fetched once more.
func (c *Cache) ForgetUnreachable() int {
	n := 0
	for key, item := range c.items.Items() {
		e := item.Object.(*entry)
		if e.latest.Result != policy.Unreachable {
			continue
		}
		n++
		if e.good == nil {
			c.items.Delete(key) // OnEvicted -> forget
			continue
		}
		ended := *e
		ended.fresh = time.Time{} // no longer fresh: fetched again, the good copy kept
		_ = c.items.Replace(key, &ended, gocache.DefaultExpiration)
	}
	return n
}

// Len returns the number of cached authorities.
func (c *Cache) Len() int { return c.items.ItemCount() }

// Bytes returns the memory the cached entries retain, in octets, as
// entrySize accounts it: at most MaxBytes, unless a single entry is larger.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Size()
}

// fresh returns the entry for key if it is still fresh, else nil.
func (c *Cache) fresh(key string) *entry {
	v, ok := c.items.Get(key)
	if !ok {
		return nil
	}
	e := v.(*entry)
	if !c.opts.Now().Before(e.fresh) {
		return nil
	}
	return e
}

// store files a new access result for key and returns the new entry. The
// cache keeps what decisions use: the body's text (a.Raw) and header fields
// (a.Header), which only the archive reads before this, are dropped, and a
// FinalURL equal to URL shares its octets.
func (c *Cache) store(key string, a policy.Access) *entry {
	now := c.opts.Now()
	a.Raw, a.Header = nil, nil
	if a.FinalURL == a.URL {
		a.FinalURL = a.URL
	}
	e := &entry{latest: a}
	switch a.Result {
	case policy.Successful:
		e.good, e.goodAt = &e.latest, now
		e.fresh = now.Add(c.opts.TTL(a))
	case policy.Unavailable:
		e.fresh = now.Add(c.opts.TTL(a))
	default: // Unreachable: retry soon, and keep a recent good copy in force.
		e.fresh = now.Add(c.opts.TTL(a))
		if prev, ok := c.items.Get(key); ok {
			p := prev.(*entry)
			if p.good != nil && c.opts.StaleFor > 0 && now.Sub(p.goodAt) <= c.opts.StaleFor {
				e.good, e.goodAt, e.staleOK = p.good, p.goodAt, true
			}
		}
	}
	c.admit(key, entrySize(key, e))
	c.items.SetDefault(key, e)
	return e
}

// admit records key, whose entry retains size octets, as the newest entry,
// evicting the oldest ones while the cache holds more than MaxEntries
// entries or MaxBytes octets.
func (c *Cache) admit(key string, size int64) {
	c.mu.Lock()
	evict := c.order.Add(key, size, nil)
	c.mu.Unlock()
	for _, k := range evict {
		c.items.Delete(k) // OnEvicted -> forget, which finds nothing left to do
	}
}

// forget drops key from the eviction order once go-cache has removed it.
func (c *Cache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Remove(key)
}
