package license

import (
	"context"
	"net/http"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// FetchOptions returns the options FetchDocument reads a license with:
// at most maxBytes octets (DefaultMaxBytes when 0 or less), parsed by
// Parse.
func FetchOptions(maxBytes int) access.DocumentOptions {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return access.DocumentOptions{What: "license", Accept: policy.LicenseMediaType + ", application/xml;q=0.9, */*;q=0.1",
		MaxBytes: maxBytes, Parse: parseDocument}
}

// parseDocument is Parse as an access.DocumentOptions.Parse.
func parseDocument(body []byte, _ http.Header) (policy.Document, error) {
	l, err := Parse(body)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// SourceOptions configure a Source.
type SourceOptions struct {
	// Fetcher fetches licenses: robots.txt's, with its destination
	// guard, timeouts and header limit. Required.
	Fetcher *access.Fetcher
	// MaxBytes bounds a license document, in octets; 0 means
	// DefaultMaxBytes. A larger one is unreadable.
	MaxBytes int
	// Cache are the cache's bounds and TTL rules: robots.txt's.
	Cache access.CacheOptions
	// Record is called with each fetch before it is cached (the audit
	// archive keeps the document by its SHA-256) and returns it without
	// its Raw body; nil keeps nothing.
	Record func(policy.Access) policy.Access
}

// Source fetches and caches licenses by URL, with the rules of
// access.NewDocumentCache. It is safe for concurrent use; a nil *Source
// reads no license.
type Source struct {
	cache *access.Cache
	links *links
}

// NewSource returns a Source.
func NewSource(o SourceOptions) *Source {
	fo := FetchOptions(o.MaxBytes)
	fetch := func(ctx context.Context, url string) policy.Access {
		a := o.Fetcher.FetchDocument(ctx, url, fo)
		if o.Record != nil {
			a = o.Record(a)
		}
		return a
	}
	ttl := o.Cache.TTLRules.WithDefaults().MaxTTL
	return &Source{cache: access.NewDocumentCache(fetch, o.Cache), links: newLinks(ttl, o.Cache.Now)}
}

// Get returns the license fetch in force for url (see access.Cache.GetURL).
func (s *Source) Get(ctx context.Context, url string) (policy.Access, policy.CacheState) {
	return s.cache.GetURL(ctx, url)
}

// Check returns what the license robots.txt r names says about a request
// for path at host by a crawler declared for purposes, fetching the
// license when the cache holds no fresh copy: nil when s is nil, r is nil
// or names no license, or no purpose is declared. Of several License
// lines, the first whose value is an absolute URL applies.
func (s *Source) Check(ctx context.Context, r *robots.Robots, host, path string, purposes []string) *policy.License {
	if s == nil || r == nil || !r.HasLicense() || len(purposes) == 0 {
		return nil
	}
	refs := r.Licenses()
	if len(refs) == 0 {
		return nil
	}
	a, _ := s.Get(ctx, refs[0].URL)
	l := Decide(&a, refs[0], host, path, purposes)
	l.Source = policy.LicenseFromRobots
	return l
}

// RememberLink remembers url, the license a response for resource named
// in a Link header field (see policy.Policy.Observe), so that CheckLink reads it for
// later requests for resource; url "" forgets what was remembered (the
// resource names no license any more). resource is the exact resource:
// the canonical authority and the path (with query) as decided. An entry
// lives as long as a license may be cached (the cache's MaxTTL, at most
// 24 hours) and at most MaxLinks entries and MaxLinkBytes octets are
// kept, the least recently used forgotten first. A nil s remembers
// nothing.
func (s *Source) RememberLink(resource, url string) {
	if s == nil {
		return
	}
	s.links.put(resource, url)
}

// CheckLink returns what the license a response for resource named in a
// Link header field (see RememberLink) says about a request for path at
// host by a crawler declared for purposes, read like a robots.txt License
// line's license (the same cache, limits and decisions, an unreadable
// license included): nil when s is nil, no purpose is declared, or no
// license is remembered for resource.
func (s *Source) CheckLink(ctx context.Context, resource, host, path string, purposes []string) *policy.License {
	if s == nil || len(purposes) == 0 {
		return nil
	}
	url := s.links.get(resource)
	if url == "" {
		return nil
	}
	a, _ := s.Get(ctx, url)
	l := Decide(&a, robots.License{URL: url}, host, path, purposes)
	l.Source = policy.LicenseFromLink
	return l
}
