package payments

import "net/http"

// priceFieldKeys are the keys (see fieldKey) of the header fields by which
// a request agrees to a price: crawler-exact-price and crawler-max-price.
var priceFieldKeys = [...]string{fieldKey(HeaderExactPrice), fieldKey(HeaderMaxPrice)}

// RemovePriceFields deletes from h every field an origin might read as
// crawler-exact-price or crawler-max-price, whatever its spelling: the
// names compare case-insensitively and with every character that is not
// an ASCII letter or digit ignored, so Crawler_Max_Price (which a CGI,
// PHP or nginx origin reads as HTTP_CRAWLER_MAX_PRICE), crawler.max.price
// and CRAWLERMAXPRICE go too. It reports whether it removed any. Only
// robotsproxy agrees to a price, within the identity's caps: a client's
// own field could spend past its budget or, on a signed request, the
// operator's money.
func RemovePriceFields(h http.Header) bool {
	removed := false
	for name := range h {
		if isPriceField(name) {
			delete(h, name)
			removed = true
		}
	}
	return removed
}

// hasPriceField reports whether h has a field RemovePriceFields removes.
func hasPriceField(h http.Header) bool {
	for name := range h {
		if isPriceField(name) {
			return true
		}
	}
	return false
}

// isPriceField reports whether the field name reads as one of the price
// agreement fields (see RemovePriceFields). It allocates nothing.
func isPriceField(name string) bool {
	for _, p := range priceFieldKeys {
		if sameKey(name, p) {
			return true
		}
	}
	return false
}

// sameKey reports whether fieldKey(name) == key, without building it.
func sameKey(name, key string) bool {
	j := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			continue
		}
		if j == len(key) || key[j] != c {
			return false
		}
		j++
	}
	return j == len(key)
}

// fieldKey is name lower-cased, with every character other than an
// ASCII letter or digit left out.
func fieldKey(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b = append(b, c)
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}
