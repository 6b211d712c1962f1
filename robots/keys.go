package robots

import "strings"

// keyKind classifies the key of a record.
type keyKind uint8

const (
	keyInvalid keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyOther
)

// knownKeys maps lower-cased keys, including the misspellings accepted as a
// leniency (RFC 9309 2.2.4), to their kind.
var knownKeys = map[string]keyKind{
	"user-agent":  keyUserAgent,
	"useragent":   keyUserAgent,
	"user agent":  keyUserAgent,
	"user-agents": keyUserAgent,
	"allow":       keyAllow,
	"disallow":    keyDisallow,
	"dissallow":   keyDisallow,
	"dissalow":    keyDisallow,
	"disalow":     keyDisallow,
	"diasllow":    keyDisallow,
	"disallaw":    keyDisallow,
	"sitemap":     keySitemap,
	"sitemaps":    keySitemap,
	"site-map":    keySitemap,
}

// maxKnownKey is the length of the longest key of knownKeys and
// otherKeys ("content-signal").
const maxKnownKey = 14

// lowerKey lower-cases a key of up to maxKnownKey octets into buf; ok is
// false for longer keys.
func lowerKey(buf *[maxKnownKey]byte, key string) (lower []byte, ok bool) {
	if len(key) > len(buf) {
		return nil, false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(key)], true
}

// knownKey returns the kind of a key as written, compared
// case-insensitively, and whether it is one of knownKeys.
func knownKey(key string) (keyKind, bool) {
	var buf [maxKnownKey]byte
	lower, ok := lowerKey(&buf, key)
	if !ok {
		return keyInvalid, false
	}
	k, ok := knownKeys[string(lower)]
	return k, ok
}

// splitRecord splits a comment-free, trimmed line into its key kind, the
// key as written and the trimmed value. The usual form is "key: value";
// as a leniency, a known key followed by white space and a value, without a
// colon, is accepted too ("disallow /x"). Any other key made of token
// characters is keyOther; anything else is keyInvalid.
func splitRecord(line string) (keyKind, string, string) {
	if i := strings.IndexByte(line, ':'); i >= 0 {
		key := trimWS(line[:i])
		value := trimWS(line[i+1:])
		if k, ok := knownKey(key); ok {
			return k, key, value
		}
		if isOtherKey(key) {
			return keyOther, key, value
		}
	}
	if i := strings.IndexAny(line, " \t"); i > 0 {
		key := line[:i]
		if k, ok := knownKey(key); ok {
			return k, key, trimWS(line[i:])
		}
	}
	return keyInvalid, "", ""
}

// isOtherKey reports whether key looks like the key of a record: a
// non-empty run of token characters.
func isOtherKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !IsTokenChar(key[i]) {
			return false
		}
	}
	return true
}

// Kinds of the entries of the records section (see compile.go).
const (
	recEnd     = 0 // end of the section
	recSitemap = 1 // a sitemap: its value
	recLiteral = 2 // another record, its key spelt out
	recKnown   = 3 // another record with key otherKeys[kind-recKnown]
)

// otherKeys are the keys of other records stored as a one-octet code
// rather than spelt out: the most common ones in the corpus, and the ones
// the package interprets (see extras.go, usage.go). "crawldelay" is a
// misspelling of "crawl-delay" and is stored as such. New keys go at the
// end: the codes of the others must not change.
var otherKeys = [...]string{
	"crawl-delay", "host", "clean-param", "request-rate", "visit-time",
	"noindex", "nofollow", "noarchive", "crawldelay", "content-usage",
	"content-signal", "license",
}

// Record kinds of the other records the package interprets.
const (
	recCrawlDelay    = recKnown + 0
	recRequestRate   = recKnown + 3
	recCrawlDelay2   = recKnown + 8 // "crawldelay"
	recContentUsage  = recKnown + 9
	recContentSignal = recKnown + 10
	recLicense       = recKnown + 11
)

// otherKeyCode returns the record kind for an other record's key as
// written: recKnown+i for otherKeys[i], else recLiteral.
func otherKeyCode(key string) byte {
	var buf [maxKnownKey]byte
	lower, ok := lowerKey(&buf, key)
	if !ok {
		return recLiteral
	}
	for i, k := range otherKeys {
		if string(lower) == k {
			return byte(recKnown + i)
		}
	}
	return recLiteral
}

// otherKey returns the key (Record.Key) of a record kind of recKnown or
// above.
func otherKey(kind byte) string {
	k := otherKeys[kind-recKnown]
	if k == "crawldelay" {
		return "crawl-delay"
	}
	return k
}
