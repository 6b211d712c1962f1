package policy

import (
	"slices"
	"strings"
)

// Declarations are the purposes an operator declares per product token
// (usage.purposes). The purposes of proxy users and client ranges
// (identity.*.purposes) are carried by the pin that identifies the
// request (Pin.Purposes) and passed to Purposes. It is safe for
// concurrent use; a nil *Declarations declares nothing per token.
type Declarations struct {
	tokens map[string][]string
}

// NewDeclarations returns the declarations per product token. Product
// tokens match case-insensitively (RFC 9309 2.2.1). It keeps no reference
// to its argument's map and slices.
func NewDeclarations(tokens map[string][]string) *Declarations {
	d := &Declarations{tokens: map[string][]string{}}
	for t, p := range tokens {
		d.tokens[strings.ToLower(t)] = slices.Clone(p)
	}
	return d
}

// Purposes returns the purposes declared for a request, the most specific
// declaration first: pinned, those of the user or client range that pins
// the request's identity (Pin.Purposes), else those of the
// product token the request was decided as. Nil when none declares any.
func (d *Declarations) Purposes(pinned []string, token string) []string {
	if len(pinned) > 0 {
		return pinned
	}
	if d == nil {
		return nil
	}
	return d.byToken(token)
}

// byToken looks token up in the lower-case product token map, lowering it
// in ASCII (product tokens are ASCII, RFC 9309 2.2.1) on the stack when it
// has at most 64 octets, so that the lookup allocates nothing.
func (d *Declarations) byToken(token string) []string {
	if len(token) > 64 {
		return d.tokens[strings.ToLower(token)]
	}
	var buf [64]byte
	b := buf[:len(token)]
	for i := 0; i < len(token); i++ {
		c := token[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return d.tokens[string(b)] // no conversion: the compiler looks the octets up
}
