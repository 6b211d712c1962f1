package ipranges

import (
	"net/netip"
	"slices"
)

// Neighbourhood lengths: an address outside a token's ranges but inside
// the /16 (IPv4) or /32 (IPv6) of one of its prefixes is a near miss
// (Set.Near). Operators allocate their crawlers' addresses from a few
// such blocks (Google's 66.249.64.0/19 and 2001:4860::/32), so near
// misses in number say the ranges file is trimmed or out of date rather
// than that the requests are impostors', who come from anywhere.
const (
	NearBits4 = 16
	NearBits6 = 32
)

// Set is a set of prefixes, merged into sorted spans so that Contains is
// a binary search however many prefixes an operator publishes (Google's
// user-triggered fetchers have over a thousand). Immutable once built;
// safe for concurrent use.
type Set struct {
	spans []span // sorted by lo, disjoint and not adjacent
	near  []span // the neighbourhoods of the prefixes, likewise
	n     int    // prefixes given
}

// span is an inclusive range of addresses of one family.
type span struct{ lo, hi netip.Addr }

// NewSet returns the set of the prefixes ps (IPv4-mapped IPv6 prefixes
// are read as IPv4).
func NewSet(ps []netip.Prefix) *Set {
	s := &Set{n: len(ps)}
	var near []netip.Prefix
	for _, p := range ps {
		p = unmapPrefix(p)
		s.spans = append(s.spans, span{p.Addr(), last(p)})
		bits := NearBits4
		if p.Addr().Is6() {
			bits = NearBits6
		}
		if p.Bits() > bits {
			p, _ = p.Addr().Prefix(bits)
		}
		near = append(near, p)
	}
	s.spans = merge(s.spans)
	for _, p := range near {
		s.near = append(s.near, span{p.Addr(), last(p)})
	}
	s.near = merge(s.near)
	return s
}

// Len is the number of prefixes the set was built from.
func (s *Set) Len() int { return s.n }

// Contains reports whether addr lies in one of the prefixes; an
// IPv4-mapped IPv6 address is read as its IPv4 address.
func (s *Set) Contains(addr netip.Addr) bool { return in(s.spans, addr.Unmap()) }

// Near reports whether addr lies outside the prefixes but in the
// neighbourhood (NearBits4, NearBits6) of one of them.
func (s *Set) Near(addr netip.Addr) bool {
	addr = addr.Unmap()
	return !in(s.spans, addr) && in(s.near, addr)
}

func in(spans []span, a netip.Addr) bool {
	// the first span that starts after a; the one before it may hold a
	i, _ := slices.BinarySearchFunc(spans, a, func(s span, a netip.Addr) int {
		if s.lo.Compare(a) > 0 {
			return 1
		}
		return -1
	})
	return i > 0 && spans[i-1].hi.Compare(a) >= 0 && spans[i-1].lo.BitLen() == a.BitLen()
}

// merge sorts spans and joins those that overlap or touch.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.lo.Compare(b.lo) })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].lo.BitLen() == s.lo.BitLen() {
			prev := &out[n-1]
			if next := prev.hi.Next(); !next.IsValid() || next.Compare(s.lo) >= 0 {
				if s.hi.Compare(prev.hi) > 0 {
					prev.hi = s.hi
				}
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// last returns the last address of the masked prefix p.
func last(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr()
	if a.Is4() {
		b := a.As4()
		setHostBits(b[:], p.Bits())
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	setHostBits(b[:], p.Bits())
	return netip.AddrFrom16(b)
}

// setHostBits sets every bit of b after the first bits.
func setHostBits(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits > 0:
			b[i] |= 0xff >> bits
			bits = 0
		default:
			b[i] = 0xff
		}
	}
}

// unmapPrefix reads an IPv4-mapped IPv6 prefix as IPv4.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}
