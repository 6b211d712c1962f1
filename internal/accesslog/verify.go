package accesslog

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/ipranges"
	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// Identity verdicts: whether a request that claims a crawler's product
// token really comes from that crawler.
const (
	// Verified: the client address lies in the token's published ranges,
	// or its reverse DNS name is in the crawler's domains and resolves
	// back to it (forward-confirmed reverse DNS).
	Verified = "verified"
	// Unverified: nothing could confirm or refute the claim (no ranges
	// or domains for the token, a host name logged instead of an
	// address, a DNS failure).
	Unverified = "unverified"
	// Impostor: the token has published ranges that do not contain the
	// address, and reverse DNS (when asked) did not confirm it either.
	Impostor = "impostor"
)

// Resolver is the DNS a Verifier asks; *net.Resolver is one.
type Resolver interface {
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DefaultDomains are the DNS domains whose hosts the crawlers named run
// from, as their operators document for forward-confirmed reverse DNS:
// keys are lower-cased product tokens.
func DefaultDomains() map[string][]string {
	google := []string{"googlebot.com", "google.com", "googleusercontent.com"}
	return map[string][]string{
		"googlebot": google, "googlebot-image": google, "googlebot-news": google, "googlebot-video": google,
		"storebot-google": google, "google-inspectiontool": google, "adsbot-google": google, "mediapartners-google": google,
		"bingbot": {"search.msn.com"}, "adidxbot": {"search.msn.com"}, "bingpreview": {"search.msn.com"},
		"applebot":    {"applebot.apple.com"},
		"yandexbot":   {"yandex.ru", "yandex.net", "yandex.com"},
		"baiduspider": {"baidu.com", "baidu.jp"},
		"duckduckbot": {"duckduckgo.com"},
		"petalbot":    {"petalsearch.com"},
	}
}

// Verifier decides whether a request's claimed crawler is who it says.
// Not safe for concurrent use.
type Verifier struct {
	// Ranges maps lower-cased product tokens to their published ranges
	// (AddFile and LoadRanges fill it, with the ranges' sources).
	Ranges map[string][]netip.Prefix
	// Domains maps lower-cased product tokens to the DNS domains their
	// hosts' names end in, for forward-confirmed reverse DNS.
	Domains map[string][]string
	// Resolver, when not nil, is asked for forward-confirmed reverse DNS.
	Resolver Resolver
	// Timeout bounds each DNS question; 0 means 5 s.
	Timeout time.Duration

	dns *memo.LRU[dnsKey, string]
	// sources and order are each token's TokenRanges (by lower-cased
	// token, in the order added); idx its ranges as a set, built from
	// Ranges on the first Verify.
	sources map[string]*TokenRanges
	order   []string
	idx     map[string]*ipranges.Set
}

type dnsKey struct {
	token string
	addr  netip.Addr
}

// Claims reports whether the verifier can say anything about token (it
// has published ranges, or domains and a resolver): requests naming such
// a token get an identity verdict.
func (v *Verifier) Claims(token string) bool {
	t := strings.ToLower(token)
	if _, ok := v.Ranges[t]; ok {
		return true
	}
	_, ok := v.Domains[t]
	return ok && v.Resolver != nil
}

// Verify returns Verified, Unverified or Impostor for a request from
// client (as logged) claiming token; call only when Claims(token).
func (v *Verifier) Verify(ctx context.Context, token, client string) string {
	t := strings.ToLower(token)
	addr, ok := parseClient(client)
	if !ok {
		return Unverified
	}
	set, hasRanges := v.index()[t]
	if hasRanges {
		tr := v.tokenRanges(t)
		tr.Requests++
		if set.Contains(addr) {
			tr.Inside++
			return Verified
		}
		tr.Outside++
		if set.Near(addr) {
			tr.Near++
		}
	}
	domains := v.Domains[t]
	if v.Resolver == nil || len(domains) == 0 {
		if hasRanges {
			return Impostor
		}
		return Unverified
	}
	if v.dns == nil {
		v.dns = memo.NewLRU[dnsKey, string](8192, 0, nil)
	}
	k := dnsKey{t, addr}
	if r, ok := v.dns.Get(k); ok {
		return r
	}
	r := v.fcrdns(ctx, addr, domains)
	if r == Unverified && hasRanges {
		r = Impostor // outside the published ranges, and DNS did not confirm
	}
	v.dns.Add(k, r, nil)
	return r
}

// index returns the ranges of each token as a set.
func (v *Verifier) index() map[string]*ipranges.Set {
	if v.idx == nil {
		v.idx = make(map[string]*ipranges.Set, len(v.Ranges))
		for t, ps := range v.Ranges {
			v.idx[t] = ipranges.NewSet(ps)
		}
	}
	return v.idx
}

// tokenRanges returns the TokenRanges of the lower-cased token t, made
// for ranges set in Ranges directly.
func (v *Verifier) tokenRanges(t string) *TokenRanges {
	if tr := v.sources[t]; tr != nil {
		return tr
	}
	if v.sources == nil {
		v.sources = map[string]*TokenRanges{}
	}
	tr := &TokenRanges{Token: t, Prefixes: len(v.Ranges[t])}
	v.sources[t] = tr
	v.order = append(v.order, t)
	return tr
}

// TokenRanges returns what the verifier knows of each token's ranges and
// how the requests so far fell, in the order the tokens were added.
func (v *Verifier) TokenRanges() []TokenRanges {
	out := make([]TokenRanges, 0, len(v.order))
	for _, t := range v.order {
		out = append(out, *v.sources[t])
	}
	return out
}

// fcrdns is forward-confirmed reverse DNS: a PTR name of addr inside one
// of domains whose A/AAAA records include addr gives Verified; PTR names
// that are all outside the domains, or that do not resolve back, give
// Impostor; a DNS failure gives Unverified.
func (v *Verifier) fcrdns(ctx context.Context, addr netip.Addr, domains []string) string {
	to := v.Timeout
	if to <= 0 {
		to = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	names, err := v.Resolver.LookupAddr(ctx, addr.String())
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return Impostor
		}
		return Unverified
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if !inDomains(n, domains) {
			continue
		}
		ips, err := v.Resolver.LookupIPAddr(ctx, n)
		if err != nil {
			continue
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip.IP); ok && a.Unmap() == addr {
				return Verified
			}
		}
	}
	return Impostor
}

func inDomains(name string, domains []string) bool {
	for _, d := range domains {
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}
