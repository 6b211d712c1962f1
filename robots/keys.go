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

// splitRecord splits a comment-free, trimmed line into its key kind, the
// lower-cased key and the trimmed value. The usual form is "key: value";
// as a leniency, a known key followed by white space and a value, without a
// colon, is accepted too ("disallow /x"). Any other key made of token
// characters is keyOther; anything else is keyInvalid.
func splitRecord(line string) (keyKind, string, string) {
	if i := strings.IndexByte(line, ':'); i >= 0 {
		key := strings.ToLower(trimWS(line[:i]))
		value := trimWS(line[i+1:])
		if k, ok := knownKeys[key]; ok {
			return k, key, value
		}
		if isOtherKey(key) {
			return keyOther, normalizeOtherKey(key), value
		}
	}
	if i := strings.IndexAny(line, " \t"); i > 0 {
		key := strings.ToLower(line[:i])
		if k, ok := knownKeys[key]; ok {
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

// normalizeOtherKey maps misspellings of well-known other records to their
// usual key.
func normalizeOtherKey(key string) string {
	if key == "crawldelay" {
		return "crawl-delay"
	}
	return key
}
