package rules

// TokenKey returns a product token's case-insensitive key, its ASCII
// letters lower-cased: a product token is ASCII only and compares
// case-insensitively (RFC 9309 2.2.1). Settings per product token
// (egress.Table.Tokens) and the names of configuration entries
// (config.Selector.Name) are keyed by it.
func TokenKey(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// DefaultBrowserTokens returns the product names that browsers and HTTP
// stacks put in User-Agent headers for compatibility. They never identify a
// crawler, so they are never matched against robots.txt groups.
func DefaultBrowserTokens() []string {
	return []string{
		"Mozilla", "AppleWebKit", "KHTML", "Gecko", "Chrome", "Chromium", "Safari",
		"Firefox", "Version", "Mobile", "Edge", "Edg", "OPR", "Opera", "Presto",
		"Trident", "MSIE", "Konqueror", "CriOS", "FxiOS", "EdgiOS", "SamsungBrowser",
		"Build", "like", "compatible", "U",
	}
}
