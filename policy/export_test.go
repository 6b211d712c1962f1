package policy

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"strconv"
)

// FetcherProxy returns the proxy function of f's HTTP transport, and false
// when the transport is not an *http.Transport, for tests that check the
// fetcher never uses the environment's proxy.
func FetcherProxy(f *Fetcher) (func(*http.Request) (*url.URL, error), bool) {
	tr, ok := f.client.Transport.(*http.Transport)
	if !ok {
		return nil, false
	}
	return tr.Proxy, true
}

// VerifiedMax is verifiedMax, the bound of a Pinner's memo.
const VerifiedMax = verifiedMax

// VerifiedLen returns how many credentials p remembers as verified.
func VerifiedLen(p *Pinner) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.verified)
}

// FillVerified adds n made-up entries to p's memo, as if n other headers
// had been verified, for tests of the memo's bound.
func FillVerified(p *Pinner, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range n {
		p.verified[sha256.Sum256([]byte("filler "+strconv.Itoa(i)))] = Pin{}
	}
}

// BreakPasswordHash replaces user's stored bcrypt hash with one that no
// password matches, so that a later successful Pin for that user proves the
// memo answered without running bcrypt.
func BreakPasswordHash(p *Pinner, user string) {
	p.hashes[user] = []byte("$2a$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinval")
}
