package identity

import (
	"regexp"
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
	"github.com/robotsproxy/robotsproxy/internal/identity/uaparser"
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

// Recognition is an Identity read from a User-Agent header with what the
// header shows besides: the kind of client and the crawler catalogue's
// entry. It is kept apart from Identity, which every request's state
// carries and which so stays small.
type Recognition struct {
	Identity
	// Client is what kind of client the header shows: ClientCrawler,
	// ClientBrowser or ClientOther.
	Client Client
	// known is 1 + the index of the crawler catalogue's entry for the
	// crawler (see Known), 0 for none.
	known int32
	// byFamily: ua-parser's data may change Client (see classify), and
	// is asked when Recognise needs Client (Identify never does).
	byFamily bool
}

// Known returns the crawler catalogue's entry for the crawler, the one
// that named Token when Source is policy.SourceCatalogue; nil when the catalogue
// does not know it. Shared: do not modify it.
func (i Recognition) Known() *catalogue.Entry {
	if i.known == 0 {
		return nil
	}
	return &catalogue.Embedded().Entries[i.known-1]
}

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
	cat       *catalogue.Catalogue
	// families is ua-parser's data (uaparser.Embedded), compiled on the
	// first Recognise that needs it: the proxy, which only identifies,
	// never compiles it.
	families func() *uaparser.Parser

	// memo remembers identities by User-Agent value: crawlers send the same
	// header on every request. Bounded by memoMax; cleared when full.
	memo *memo.Sync[string, Recognition]
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
	return &Identifier{browser: b, overrides: overrides, cat: catalogue.Embedded(), families: uaparser.Embedded,
		memo: memo.NewSync[string, Recognition](memoMax)}
}

// Catalogue is the crawler catalogue id recognises crawlers with.
func (id *Identifier) Catalogue() *catalogue.Catalogue { return id.cat }

// BrowserFamilies names the ua-parser data that Recognise tells apart
// the headers of no browser's shape with: "uap-core@" and the first 12
// hex digits of its commit. It reads the data's source, not its rules.
func (id *Identifier) BrowserFamilies() string { return uaparser.EmbeddedSource().Version() }

// Identify returns the identity of a crawler from its User-Agent header
// value: the first matching override, else its candidates:
//
//   - the names the crawler catalogue gives the crawlers it recognises in
//     the header, when the header shows them as words (catalogue.Shows):
//     "Slurp" for "Mozilla/5.0 (compatible; Yahoo! Slurp; ...)";
//   - the product names found per the RFC 9110 grammar (see
//     ProductNames) that can match a group by the name rule
//     (robots.IsAgentName: RFC 9309 product tokens, and names such as
//     "MJ12bot", "360Spider" or "img2dataset" that sites name whole;
//     "+http" and "5.0" are left out);
//
// browser tokens left out, else "*". Token, the first candidate, is the
// crawler the request is credited to: the catalogue's name, else the
// first product whose name declares a bot ("bot", "crawl", "spider"),
// else the first product; never a device ("SAMSUNG-SGH-E250/1.0 ...
// (compatible; Googlebot-Mobile/2.1; ...)" is Googlebot-Mobile). The
// returned Candidates slice is shared: do not modify it.
func (id *Identifier) Identify(userAgent string) Identity {
	return id.recognition(userAgent).Identity
}

// Recognise is Identify with the kind of client the header shows and the
// crawler catalogue's entry for it (Recognition): what audit access-log
// needs to judge crawlers and other clients and never browsers. A header
// that neither marks a crawler nor has a browser's shape is looked up in
// ua-parser's data (see Client) once, then remembered with the rest; but
// not one longer than memoMaxUserAgent, which no browser sends and which
// would be looked up again at each request: it stays what its shape says.
func (id *Identifier) Recognise(userAgent string) Recognition {
	r := id.recognition(userAgent)
	if r.byFamily {
		if len(userAgent) <= memoMaxUserAgent {
			r.Client = id.byFamily(userAgent, r.Client)
		}
		r.byFamily = false
		id.remember(userAgent, r)
	}
	return r
}

// recognition is the memoised Recognition of a header, its Client left
// undecided when that takes ua-parser's data (byFamily).
func (id *Identifier) recognition(userAgent string) Recognition {
	if ident, ok := id.memo.Get(userAgent); ok {
		return ident
	}
	ident := id.identify(userAgent)
	id.remember(userAgent, ident)
	return ident
}

func (id *Identifier) remember(userAgent string, r Recognition) {
	if len(userAgent) > memoMaxUserAgent {
		return // a hostile header is not kept: the memo stays under memoMax × memoMaxUserAgent octets
	}
	id.memo.Put(userAgent, r)
}

func (id *Identifier) identify(userAgent string) Recognition {
	products := ProductNames(userAgent)
	rec := id.recognise(userAgent, products)
	r := Recognition{known: rec.known}
	r.Client, r.byFamily = classify(userAgent, products, rec)
	for _, o := range id.overrides {
		if o.Pattern.MatchString(userAgent) {
			r.Identity = Identity{Token: o.Token, Candidates: []string{o.Token}, Source: policy.SourceOverride}
			return r
		}
	}
	r.Identity = id.candidates(products, rec)
	return r
}

// candidates orders a header's candidates: the catalogue's names of the
// crawler it recognised, else its first product that declares a bot,
// first; then the header's products; then the catalogue's terms.
func (id *Identifier) candidates(products []string, rec recognition) Identity {
	header := id.names(nil, products)
	first := max(0, slices.IndexFunc(header, declaresBot))
	source := policy.SourceUserAgent
	cands := id.names(nil, rec.names)
	if len(cands) > 0 {
		if len(header) == 0 || !strings.EqualFold(cands[0], header[first]) {
			source = policy.SourceCatalogue
		}
		cands = id.names(cands, header)
	} else if first > 0 {
		cands = append(append([]string{header[first]}, header[:first]...), header[first+1:]...)
	} else {
		cands = header
	}
	if len(cands) == 0 {
		source = policy.SourceCatalogue
	}
	if cands = id.names(cands, rec.terms); len(cands) == 0 {
		return Identity{Token: "*", Source: policy.SourceDefault}
	}
	return Identity{Token: cands[0], Candidates: cands, Source: source}
}

// names appends to dst each name of list that can name a group (the name
// rule, robots.IsAgentName) and is no browser token, once
// (case-insensitively).
func (id *Identifier) names(dst, list []string) []string {
	for _, n := range list {
		if robots.IsAgentName(n) && !id.browser[strings.ToLower(n)] && !containsFold(dst, n) {
			dst = append(dst, n)
		}
	}
	return dst
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
// itself; a URL's scheme is none ("https://linko.app/crawler" gives
// "linko.app"). Malformed input yields what could be read, never an
// error.
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
			if strings.HasPrefix(ua[j:], "://") {
				i = j + len("://") // a URL's scheme is no product; its host may be a name
				continue
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
