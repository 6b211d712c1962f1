package access

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
)

// DocumentOptions say how FetchDocument reads and parses a document.
type DocumentOptions struct {
	// What names the document in errors ("license").
	What string
	// Accept is sent as the Accept header field when not "".
	Accept string
	// MaxBytes bounds the body, in octets. A longer body is not cut (a
	// cut document does not parse): the result is Unreachable with
	// CauseTooLarge. Required (> 0).
	MaxBytes int
	// Parse parses a 2xx body; h holds the kept response fields (see
	// Access.Header). An error makes the result Unreachable with
	// CauseOther: a document that cannot be read fails closed.
	Parse func(body []byte, h http.Header) (policy.Document, error)
}

// FetchDocument gets the document at url with the Fetcher's client,
// destination guard, timeouts, redirect limit and header limit, and
// classifies the outcome as Fetch classifies robots.txt (RFC 9309 2.3.1):
// a 2xx whose body parses is Successful with Doc set; a 4xx is
// Unavailable; a 5xx, a network error, a body over o.MaxBytes or one that
// does not parse is Unreachable. Raw and SHA256 are set whenever a body
// was read whole, parsed or not, so that an archive keeps the evidence.
// It never returns an error.
func (f *Fetcher) FetchDocument(ctx context.Context, url string, o DocumentOptions) policy.Access {
	start := time.Now()
	a := f.get(ctx, url, o.What, o.Accept, func(a policy.Access, resp *http.Response) policy.Access {
		if s := resp.StatusCode; s < 200 || s >= 300 {
			return f.classifyStatus(a, s)
		}
		return readDocument(a, resp.Body, o)
	})
	a.FetchedAt, a.Duration = start, time.Since(start)
	return a
}

// readDocument reads and parses a 2xx body of at most o.MaxBytes octets.
func readDocument(a policy.Access, body io.Reader, o DocumentOptions) policy.Access {
	b, err := io.ReadAll(io.LimitReader(body, int64(o.MaxBytes)+1))
	switch {
	case err != nil:
		a = fail(a, policy.Unreachable, fmt.Errorf("read %s %s: %w", o.What, a.FinalURL, err))
		a.Cause = classifyError(err, a.FinalURL)
		return a
	case len(b) > o.MaxBytes:
		a = fail(a, policy.Unreachable, fmt.Errorf("read %s %s: larger than %d octets", o.What, a.FinalURL, o.MaxBytes))
		a.Cause = policy.CauseTooLarge
		return a
	}
	a.Raw, a.SHA256 = b, sha256.Sum256(b)
	doc, err := o.Parse(b, a.Header)
	if err != nil {
		a = fail(a, policy.Unreachable, fmt.Errorf("parse %s %s: %w", o.What, a.FinalURL, err))
		a.Cause = policy.CauseOther
		return a
	}
	a.Result, a.Doc = policy.Successful, doc
	return a
}

// NewDocumentCache returns a Cache of documents keyed by their URL, which
// calls fetch on misses (a FetchDocument, say). It follows the rules of a
// robots.txt Cache (CacheOptions): coalesced misses, TTLs by Cache-Control
// within [MinTTL, MaxTTL], an unreachable result retried after
// UnreachableRetry while a successful copy stands in for up to StaleFor,
// and the MaxEntries and MaxBytes bounds. Read it with GetURL.
func NewDocumentCache(fetch func(ctx context.Context, url string) policy.Access, o CacheOptions) *Cache {
	return NewCache(func(ctx context.Context, _, url string) policy.Access { return fetch(ctx, url) }, o)
}

// GetURL returns the result in force for a document URL, from a Cache
// made by NewDocumentCache, fetching it when missing or no longer fresh
// (see Get).
func (c *Cache) GetURL(ctx context.Context, url string) (policy.Access, policy.CacheState) {
	return c.GetKeyed(ctx, url, "", url)
}
