package usage

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
)

// Range declares the purposes of the clients in a range of addresses.
type Range struct {
	// Prefix is the client address range.
	Prefix netip.Prefix
	// Purposes are the purposes declared for it; nil declares none.
	Purposes []string
}

// Declarations are the purposes an operator declares: per proxy user
// (identity.users[].purposes), per client range
// (identity.client_ranges[].purposes) and per product token
// (usage.purposes). It is safe for concurrent use; a nil *Declarations
// declares nothing.
type Declarations struct {
	users  map[string][]string
	ranges []Range // longest prefix first
	tokens map[string][]string
}

// NewDeclarations returns the declarations. Product tokens match
// case-insensitively (RFC 9309 2.2.1). It keeps no reference to its
// arguments' maps and slices.
func NewDeclarations(users map[string][]string, ranges []Range, tokens map[string][]string) *Declarations {
	d := &Declarations{users: map[string][]string{}, tokens: map[string][]string{}}
	for u, p := range users {
		d.users[u] = slices.Clone(p)
	}
	for t, p := range tokens {
		d.tokens[strings.ToLower(t)] = slices.Clone(p)
	}
	for _, r := range ranges {
		d.ranges = append(d.ranges, Range{Prefix: r.Prefix.Masked(), Purposes: slices.Clone(r.Purposes)})
	}
	slices.SortStableFunc(d.ranges, func(a, b Range) int { return cmp.Compare(b.Prefix.Bits(), a.Prefix.Bits()) })
	return d
}

// Purposes returns the purposes declared for a request, the most specific
// declaration first: the authenticated proxy user's (user, "" when none),
// else those of the longest client range containing client (the range
// that pins the client's identity), else those of the product token the
// request was decided as. Nil when none declares any.
func (d *Declarations) Purposes(user string, client netip.Addr, token string) []string {
	if d == nil {
		return nil
	}
	if p := d.users[user]; user != "" && len(p) > 0 {
		return p
	}
	client = client.Unmap()
	for _, r := range d.ranges {
		if r.Prefix.Contains(client) {
			if len(r.Purposes) > 0 {
				return r.Purposes
			}
			break
		}
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
