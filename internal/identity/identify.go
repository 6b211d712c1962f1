package identity

import (
	"regexp"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// DefaultBrowserTokens returns the product names that browsers and HTTP
// stacks put in User-Agent headers for compatibility
// (rules.DefaultBrowserTokens, the default of identity.browser_tokens).
// They never identify a crawler, so they are never matched against
// robots.txt groups.
func DefaultBrowserTokens() []string { return rules.DefaultBrowserTokens() }

// Identity is who a request's crawler is: policy.Identity, the one
// definition, which Identify returns.
type Identity = policy.Identity

// Override maps User-Agent headers that match Pattern to a fixed product
// token, taking precedence over the header's own tokens.
type Override struct {
	// Pattern is matched against the whole User-Agent header value.
	Pattern *regexp.Regexp
	// Token is the product token to use.
	Token string
}

// Identifier extracts product tokens from User-Agent headers. It is
// immutable and safe for concurrent use.
type Identifier struct {
	browser   map[string]bool // lower-cased browser tokens
	overrides []Override

	// memo remembers identities by User-Agent value: crawlers send the same
	// header on every request. Bounded by memoMax; cleared when full.
	memo *memo.Sync[string, Identity]
}

// memoMax bounds the identities remembered by an Identifier.
const memoMax = 4096

// memoMaxUserAgent is the longest User-Agent value remembered (real ones
// are under 512 octets), so the memo holds at most about 4 MiB however
// long the headers clients send.
const memoMaxUserAgent = 1024

// NewIdentifier returns an Identifier that ignores the given browser tokens
// (case-insensitive; nil means none) and applies overrides in order.
func NewIdentifier(browserTokens []string, overrides []Override) *Identifier {
	b := make(map[string]bool, len(browserTokens))
	for _, t := range browserTokens {
		b[strings.ToLower(t)] = true
	}
	return &Identifier{browser: b, overrides: overrides, memo: memo.NewSync[string, Identity](memoMax)}
}

// Identify returns the identity of a crawler from its User-Agent header
// value: the first matching override, else the product names found per the
// RFC 9110 grammar (see ProductNames) that can match a group by the name
// rule (robots.IsAgentName: RFC 9309 product tokens, and names such as
// "MJ12bot", "360Spider" or "img2dataset" that sites name whole; "+http"
// and "5.0" are left out), browser tokens left out, else "*". The
// returned Candidates slice is shared: do not modify it.
func (id *Identifier) Identify(userAgent string) Identity {
	if ident, ok := id.memo.Get(userAgent); ok {
		return ident
	}
	ident := id.identify(userAgent)
	if len(userAgent) > memoMaxUserAgent {
		return ident // a hostile header is not kept: the memo stays under memoMax × memoMaxUserAgent octets
	}
	id.memo.Put(userAgent, ident)
	return ident
}

func (id *Identifier) identify(userAgent string) Identity {
	for _, o := range id.overrides {
		if o.Pattern.MatchString(userAgent) {
			return Identity{Token: o.Token, Candidates: []string{o.Token}, Source: policy.SourceOverride}
		}
	}
	var cands []string
	for _, name := range ProductNames(userAgent) {
		if robots.IsAgentName(name) && !id.browser[strings.ToLower(name)] && !containsFold(cands, name) {
			cands = append(cands, name)
		}
	}
	if len(cands) == 0 {
		return Identity{Token: "*", Source: policy.SourceDefault}
	}
	return Identity{Token: cands[0], Candidates: cands, Source: policy.SourceUserAgent}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// ProductNames returns the product names in a User-Agent header value, in
// order, following RFC 9110 section 10.1.5:
//
//	User-Agent = product *( RWS ( product / comment ) )
//	product    = token [ "/" product-version ]
//
// Names of products outside comments are returned, and so are the names of
// "name/version" items inside comments, where crawlers usually identify
// themselves: "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://...)"
// gives "Mozilla" and "ExampleBot". A bare value such as "ExampleBot" gives
// itself. Malformed input yields what could be read, never an error.
func ProductNames(ua string) []string {
	var names []string
	for i := 0; i < len(ua); {
		switch c := ua[i]; {
		case c == '(':
			end := commentEnd(ua, i)
			names = append(names, commentProducts(ua[i+1:end])...)
			i = end + 1
		case robots.IsTokenChar(c):
			j := i
			for j < len(ua) && robots.IsTokenChar(ua[j]) {
				j++
			}
			names = append(names, ua[i:j])
			i = skipVersion(ua, j)
		default:
			i++
		}
	}
	return names
}

// skipVersion skips "/" product-version after a product name at i.
func skipVersion(ua string, i int) int {
	if i < len(ua) && ua[i] == '/' {
		i++
		for i < len(ua) && robots.IsTokenChar(ua[i]) {
			i++
		}
	}
	return i
}

// commentEnd returns the index of the ")" closing the comment that opens at
// start, honouring nesting and quoted pairs; len(ua) if it is unterminated.
func commentEnd(ua string, start int) int {
	depth := 0
	for i := start; i < len(ua); i++ {
		switch ua[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(ua)
}

// commentProducts returns the crawler names in a comment's text: the names
// of "name/version" words, such as "ExampleBot" from
// "compatible; ExampleBot/0.1; +https://x", and a bare single-word item that
// directly follows a "compatible" item, such as "PetalBot" from
// "compatible;PetalBot;+https://x" (the convention crawlers without a
// version follow). URLs ("+http://...") and other words without a version
// are skipped: "Windows", "Linux" and "U" are platform words, not crawlers.
func commentProducts(text string) []string {
	var names []string
	afterCompatible := false
	for _, item := range strings.Split(text, ";") {
		item = strings.TrimSpace(item)
		if afterCompatible && isToken(item) && strings.ContainsFunc(item, isLetter) {
			names = append(names, item)
		}
		afterCompatible = strings.EqualFold(item, "compatible")
		for _, word := range strings.FieldsFunc(item, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == '(' || r == ')'
		}) {
			name, version, ok := strings.Cut(word, "/")
			if !ok || name == "" || version == "" || !isToken(name) {
				continue
			}
			names = append(names, name)
		}
	}
	return names
}

func isLetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !robots.IsTokenChar(s[i]) {
			return false
		}
	}
	return s != ""
}
