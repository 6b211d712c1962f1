// Package identity says who a request's crawler is: the product tokens of
// its User-Agent header (RFC 9309 2.2.1), or the identity an operator pins
// to proxy credentials or a client address range, with the throttle that
// bounds failed logins. A pin carries its product token, its mode and the
// usage purposes declared for it.
package identity
