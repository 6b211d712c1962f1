package catalogue

import (
	"regexp"
	"slices"
	"strings"
)

// Catalogue is a compiled File, ready to recognise crawlers in
// User-Agent headers. It is immutable and safe for concurrent use.
type Catalogue struct {
	*File
	lits    literalIndex
	regexps []*regexp.Regexp // by entry; nil for exact and name-only entries
	names   map[string][]int // lower-cased first name of name-only entries
}

// Match appends to dst the indexes of the pattern entries
// (crawler-user-agents) whose pattern matches ua, in ascending order,
// and returns it. It reads ua once through the literal index (a few
// microseconds for a browser's header) and runs a regexp only for the
// few entries whose literals cannot decide alone.
func (c *Catalogue) Match(dst []int, ua string) []int {
	start := len(dst)
	dst = c.lits.scan(dst, ua)
	found := dst[start:]
	slices.Sort(found)
	found = slices.Compact(found)
	out := found[:0]
	for _, i := range found {
		if re := c.regexps[i]; re == nil || re.MatchString(ua) {
			out = append(out, i)
		}
	}
	return dst[:start+len(out)]
}

// Named appends to dst the indexes of the name entries (ai.robots.txt)
// that name is the first name of, case-insensitively, and that ua shows
// whole when the entry's token has more words ("ChatGPT Agent").
func (c *Catalogue) Named(dst []int, name, ua string) []int {
	var buf [64]byte
	if len(name) > len(buf) {
		return dst // no name entry is that long
	}
	low := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		low[i] = lowerASCII(name[i])
	}
	for _, i := range c.names[string(low)] {
		if t := c.Entries[i].Token; !strings.Contains(t, " ") || containsFold(ua, t) {
			dst = append(dst, i)
		}
	}
	return dst
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// NameEntry returns the name entry (ai.robots.txt) whose first name is
// name, case-insensitively, nil if none: what the AI crawlers' list says
// of a crawler that a pattern entry recognised.
func (c *Catalogue) NameEntry(name string) *Entry {
	if is := c.names[strings.ToLower(name)]; len(is) > 0 {
		return &c.Entries[is[0]]
	}
	return nil
}

// containsFold reports whether s contains sub, ASCII case-insensitively.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// literalIndex finds the literals a header contains. Unanchored ones are
// indexed by their first three octets, behind a bitmap of those octets'
// hashes, so that most positions of a header cost one bit test.
type literalIndex struct {
	anchored []lit // Begin or End, or shorter than three octets
	heads    [1 << 16 / 64]uint64
	byHead   map[uint32][]lit
}

// head is the key of the three octets at s[i:].
func head(s string, i int) uint32 { return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 }

// headBit is a head's bit in literalIndex.heads.
func headBit(k uint32) uint32 { return k * 0x9E3779B1 >> 16 }

type lit struct {
	s          string
	entry      int32
	begin, end bool
}

func (x *literalIndex) add(s string, entry int32) {
	l := lit{entry: entry}
	l.begin, l.end = strings.HasPrefix(s, Begin), strings.HasSuffix(s, End)
	l.s = strings.TrimSuffix(strings.TrimPrefix(s, Begin), End)
	if l.begin || l.end || len(l.s) < 3 {
		x.anchored = append(x.anchored, l)
		return
	}
	k := head(l.s, 0)
	if x.byHead == nil {
		x.byHead = map[uint32][]lit{}
	}
	b := headBit(k)
	x.heads[b>>6] |= 1 << (b & 63)
	x.byHead[k] = append(x.byHead[k], l)
}

// scan appends the entry of every literal that ua contains (at its
// anchor); an entry may come more than once.
func (x *literalIndex) scan(dst []int, ua string) []int {
	for _, l := range x.anchored {
		var ok bool
		switch {
		case l.begin && l.end:
			ok = ua == l.s
		case l.begin:
			ok = strings.HasPrefix(ua, l.s)
		case l.end:
			ok = strings.HasSuffix(ua, l.s)
		default:
			ok = strings.Contains(ua, l.s)
		}
		if ok {
			dst = append(dst, int(l.entry))
		}
	}
	for i := 0; i+2 < len(ua); i++ {
		k := head(ua, i)
		if b := headBit(k); x.heads[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		for _, l := range x.byHead[k] {
			if strings.HasPrefix(ua[i:], l.s) {
				dst = append(dst, int(l.entry))
			}
		}
	}
	return dst
}
