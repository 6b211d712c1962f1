package robots

import "slices"

// The compiled form of a file is one string, the arena, referred to by
// offsets. Numbers are unsigned LEB128 varints unless said otherwise. In
// order:
//
//  1. Rule programs, one per group, in file order, each linear or
//     bucketed. A linear program lists the group's rules in file order, in
//     three parts, so that the matcher's walk over the rules does not wait
//     on loads (see matcher.scanRange):
//
//     headers  the varint length of this part <<1 (bit 0 clear: linear),
//     then per rule one octet min(len(pattern), hdrLong)<<4 |
//     fLine | fEdits | fWild | fAllow and, when the length is
//     hdrLong or more, the varint length minus hdrLong
//     extras   the varint length of this part, then per rule with fLine
//     the varint line minus the previous rule's (0 before the
//     first; without fLine it is 1), and per rule with fEdits the
//     varint length and the edits (see appendPattern): how the
//     value was written where it differs from the pattern (for
//     the raw twin of a bridged rule, twinMark and the value as
//     bridged, see charset.go)
//     patterns the rules' normalised patterns (Rule.Pattern), back to
//     back
//
//     A group of bucketMinRules to bucketMaxRules rules whose headers take
//     at most 255 octets gets a bucketed program instead (see
//     emitBucketed), so that a path is compared with the few rules that
//     can match it. A rule's bucket is the second octet of its pattern when
//     the pattern starts with two literal octets, else 0 (any path may
//     match it); the rules are stored by bucket, in file order within a
//     bucket, so lines are kept in a table:
//
//     head      the varint length of the headers <<1 | 1, then 8 octets:
//     the number of buckets nb, the number of rules n, the width w
//     (1 or 2) of a line, the line of the first rule in file
//     order (3 octets, little endian) and the length of the
//     extras (2 octets, little endian)
//     keys      the buckets' keys (nb octets, ascending, so 0 first)
//     directory nb+1 entries of 4 octets: the index of the bucket's first
//     rule, the offset of its first header from the first header,
//     and the offset of its first pattern from the first pattern
//     (2 octets, little endian); the last entry marks the end
//     headers   as above; fLine is never set
//     extras    as above, edits only
//     lines     per rule (in stored order) its line minus the first's, w
//     octets little endian
//     patterns  as above, in stored order
//
//  2. Token entries, one per distinct product token or name (lower-cased),
//     "*" included (Robots.star): varint length and the token, then varint
//     length and a list of (group index, program offset) varint pairs,
//     one per group that names the token, in file order (RFC 9309 2.2.1:
//     those groups are merged). A user-agent line whose whole name is not
//     its product token ("MJ12bot", token "MJ") names both (see
//     IsAgentName).
//
//  3. Hash slots (Robots.slots): 1<<slotBits little-endian integers of 2
//     octets (4 with slotWide), each 0 or 1 + the offset of a token entry
//     other than "*", placed by tokenHash with linear probing.
//
//  4. The group table (Robots.groups): varint number of groups, then for
//     each the varint line of its first user-agent line, the varint offset
//     of its program, the varint number of its user-agent lines and, for
//     each, the varint 0 for a line that names nothing, or (1 + entry
//     offset)<<1 | upper, the entry of its name if it has one, else of its
//     product token; with upper, ceil(len/8) octets follow whose bit
//     i%8 of octet i/8 says that octet i was written upper-case.
//
//  5. Records (Robots.records), in file order: a kind octet (see recEnd),
//     then for a sitemap the varint length and the value; for another
//     record the varint 1 + group index, the varint line, with recLiteral
//     the varint length and the lower-cased key, then the varint length
//     and the value, and for a Content-Usage record (recContentUsage) the
//     varint length and the normalised path pattern, empty when the rule
//     has no path, and an octet of the preferences its statement states
//     for the vocabulary's labels (see usage.go, appendUsage). recEnd ends
//     the section. Group indexes never decrease from one record to the
//     next.
//
//  6. Zero octets if needed, so that 8 octets can be loaded from the start
//     of any pattern or token.
//
// The matcher reads programs 1 and entries 2 and 3 only; 4 and 5 serve the
// methods that explain a file.

// Flags of a rule header.
const (
	fAllow   = 1 << 0 // an allow rule
	fWild    = 1 << 1 // the pattern holds "*" or ends with "$"
	fEdits   = 1 << 2 // edits follow the pattern
	fLine    = 1 << 3 // a line delta follows the pattern
	hdrShift = 4      // the pattern length is header >> hdrShift...
	hdrLong  = 15     // ...unless it is hdrLong: then a varint adds to it
)

// token is a distinct product token while compiling.
type token struct {
	name string // lower-cased
	// pairs lists the groups that name it (see compile.go, 2.).
	pairs     []byte
	lastGroup int
	off       int
}

// compile ends the last group and builds the arena after the programs.
func (p *parser) compile() {
	p.endGroup()
	a, r := p.prog, p.r

	// Distinct product tokens and names, and the groups that name them.
	index := make(map[string]int, len(p.agents))
	toks := make([]token, 0, len(p.agents))
	agentTok := make([]int, len(p.agents))
	key := func(name string, gi int, g pgroup) int {
		lower := asciiLower(name)
		ti, ok := index[lower]
		if !ok {
			ti = len(toks)
			index[lower] = ti
			toks = append(toks, token{name: lower, lastGroup: -1})
		}
		t := &toks[ti]
		if t.lastGroup != gi { // else the same token twice in one group
			t.lastGroup = gi
			t.pairs = appendUvarint(t.pairs, uint64(gi))
			t.pairs = appendUvarint(t.pairs, uint64(g.prog))
		}
		return ti
	}
	for gi, g := range p.groups {
		for ai := g.agents0; ai < g.agents1; ai++ {
			agentTok[ai] = -1
			if l := p.agents[ai]; l.token != "" {
				agentTok[ai] = key(l.token, gi, g)
			}
			if l := p.agents[ai]; l.name != "" { // the name rule, see IsAgentName
				agentTok[ai] = key(l.name, gi, g)
			}
		}
	}

	// 2. Token entries.
	named := 0
	for ti := range toks {
		t := &toks[ti]
		t.off = len(a)
		a = appendUvarint(a, uint64(len(t.name)))
		a = append(a, t.name...)
		a = appendUvarint(a, uint64(len(t.pairs)))
		a = append(a, t.pairs...)
		if t.name == "*" {
			r.star = uint32(t.off + 1)
		} else {
			named++
			r.lengths |= 1 << (len(t.name) & 31)
		}
	}

	// 3. Hash slots.
	r.slots = uint32(len(a))
	if named > 0 {
		bits := uint8(1)
		for 1<<bits < 2*named {
			bits++
		}
		r.slotBits = bits
		r.slotWide = len(a) >= 0xFFFF
		width := 2
		if r.slotWide {
			width = 4
		}
		base := len(a)
		a = append(a, make([]byte, width<<bits)...)
		mask := 1<<bits - 1
		for _, t := range toks {
			if t.name == "*" {
				continue
			}
			w1, w2 := tokenWords(t.name)
			s := tokenHash(w1, w2, len(t.name), bits)
			for a[base+width*s] != 0 || a[base+width*s+1] != 0 || r.slotWide && (a[base+width*s+2] != 0 || a[base+width*s+3] != 0) {
				s = (s + 1) & mask
			}
			v := t.off + 1
			for k := 0; k < width; k++ {
				a[base+width*s+k] = byte(v >> (8 * k))
			}
		}
	}

	// 4. The group table.
	r.groups = uint32(len(a))
	a = appendUvarint(a, uint64(len(p.groups)))
	for _, g := range p.groups {
		a = appendUvarint(a, uint64(g.line))
		a = appendUvarint(a, uint64(g.prog))
		a = appendUvarint(a, uint64(g.agents1-g.agents0))
		for ai := g.agents0; ai < g.agents1; ai++ {
			ti := agentTok[ai]
			if ti < 0 {
				a = append(a, 0)
				continue
			}
			name := p.agents[ai].shown()
			upper := name != toks[ti].name
			ref := uint64(toks[ti].off+1) << 1
			if upper {
				ref |= 1
			}
			a = appendUvarint(a, ref)
			if upper {
				at := len(a)
				a = append(a, make([]byte, (len(name)+7)/8)...)
				for i := 0; i < len(name); i++ {
					if 'A' <= name[i] && name[i] <= 'Z' {
						a[at+i/8] |= 1 << (i % 8)
					}
				}
			}
		}
	}

	// 5. Records.
	r.records = uint32(len(a))
	a = append(a, p.recs...)
	a = append(a, recEnd)

	// 6. Room for 8-octet loads.
	for len(a) < int(r.slots)+8 {
		a = append(a, 0)
	}
	r.a = string(a)
}

// asciiLower returns s with its ASCII letters lower-cased, s itself when it
// has none upper-case.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
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

// NumGroups returns the number of groups of the file.
func (r *Robots) NumGroups() int {
	if r.a == "" {
		return 0 // the zero Robots
	}
	n, _ := uvarint(r.a, int(r.groups))
	return n
}

// Group decodes the i-th group of the file (0-based, in file order), as
// Verdict.Groups and Record.Group number them. It allocates, and panics
// if i is out of range.
func (r *Robots) Group(i int) Group {
	if i < 0 || i >= r.NumGroups() {
		panic("robots: group index out of range")
	}
	_, at := uvarint(r.a, int(r.groups))
	for ; i > 0; i-- {
		at = r.skipGroup(at)
	}
	g, _ := r.groupAt(at)
	return g
}

// Groups decodes every group of the file, in file order. It allocates.
func (r *Robots) Groups() []Group {
	if r.a == "" {
		return nil
	}
	n, at := uvarint(r.a, int(r.groups))
	out := make([]Group, n)
	for i := range out {
		out[i], at = r.groupAt(at)
	}
	return out
}

// skipGroup returns the offset of the group table entry after the one at
// offset at.
func (r *Robots) skipGroup(at int) int {
	a := r.a
	_, at = uvarint(a, at)
	_, at = uvarint(a, at)
	n, at := uvarint(a, at)
	for ; n > 0; n-- {
		var ref int
		ref, at = uvarint(a, at)
		if ref&1 != 0 {
			l, _ := uvarint(a, ref>>1-1)
			at += (l + 7) / 8
		}
	}
	return at
}

// groupAt decodes the group table entry at offset at, and returns the
// offset of the next one.
func (r *Robots) groupAt(at int) (Group, int) {
	a := r.a
	var g Group
	var prog, n int
	g.Line, at = uvarint(a, at)
	prog, at = uvarint(a, at)
	n, at = uvarint(a, at)
	g.Agents = make([]string, n)
	for k := range g.Agents {
		var ref int
		ref, at = uvarint(a, at)
		if ref == 0 {
			continue
		}
		name, _ := entryAt(a, ref>>1-1)
		if ref&1 != 0 {
			b := []byte(name)
			for i := range b {
				if a[at+i/8]&(1<<(i%8)) != 0 {
					b[i] -= 'a' - 'A'
				}
			}
			at += (len(b) + 7) / 8
			name = string(b)
		}
		g.Agents[k] = name
	}
	g.Rules = r.rulesAt(prog)
	return g, at
}

// rulesAt decodes the rule program at offset i, in file order.
func (r *Robots) rulesAt(i int) []Rule {
	a := r.a
	hl, i := uvarint(a, i)
	var end, x, p int
	var lines lineTable
	if hl&1 != 0 {
		_, _, i, lines, p = bucketedLayout(a, i, hl>>1)
		end = i + hl>>1
		x = end
	} else {
		end = i + hl>>1
		var xl int
		xl, x = uvarint(a, end)
		p = x + xl
	}
	var rules []Rule
	line := 0
	for k := 0; i < end; k++ {
		h := int(a[i])
		i++
		n := h >> hdrShift
		if n == hdrLong {
			var ext int
			ext, i = uvarint(a, i)
			n += ext
		}
		rule := Rule{Allow: h&fAllow != 0, Pattern: a[p : p+n]}
		p += n
		switch {
		case lines.width != 0:
			line = lines.line(a, k)
		case h&fLine != 0:
			var d int
			d, x = uvarint(a, x)
			line += d
		default:
			line++
		}
		rule.Line = line
		if h&fEdits != 0 {
			var l int
			l, x = uvarint(a, x)
			rule.edits = a[x : x+l]
			x += l
		}
		rules = append(rules, rule)
	}
	if lines.width != 0 {
		// File order; a raw twin after its bridged rule (charset.go).
		slices.SortFunc(rules, func(a, b Rule) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return cmpBool(isTwin(a.edits), isTwin(b.edits))
		})
	}
	return rules
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Records returns the records that are not user-agent lines, rules or
// sitemaps (crawl-delay, host, ...), in file order. It allocates.
func (r *Robots) Records() []Record {
	var out []Record
	r.eachRecord(func(kind byte, rec Record) {
		if kind != recSitemap {
			out = append(out, rec)
		}
	})
	return out
}

// Sitemaps returns the values of the sitemap records, in file order. It
// allocates.
func (r *Robots) Sitemaps() []string {
	var out []string
	r.eachRecord(func(kind byte, rec Record) {
		if kind == recSitemap {
			out = append(out, rec.Value)
		}
	})
	return out
}

// eachRecord decodes the records section; a sitemap has only its Value set.
func (r *Robots) eachRecord(f func(kind byte, rec Record)) {
	if r.a == "" {
		return // the zero Robots
	}
	it := recIter{a: r.a, i: int(r.records)}
	var v recView
	for it.next(&v) {
		rec := Record{Key: v.key, Value: v.value, Line: v.line, Group: v.group}
		if v.kind == recSitemap {
			rec = Record{Value: v.value}
		}
		f(v.kind, rec)
	}
}

// recIter walks the records section (see compile.go, 5.) from offset i.
type recIter struct {
	a string
	i int
}

// recView is a record as recIter decodes it; its strings share the arena.
type recView struct {
	kind  byte
	at    int // offset of the record's kind octet
	group int // -1 before the first group
	line  int
	key   string // Record.Key
	value string
	// pattern is a Content-Usage rule's normalised path pattern, prefs
	// its statement's preferences for the vocabulary (see vocabPrefs).
	pattern string
	prefs   byte
}

// next decodes the next record into v, or reports false at the end.
func (it *recIter) next(v *recView) bool {
	a, i := it.a, it.i
	if a[i] == recEnd {
		return false
	}
	*v = recView{kind: a[i], at: i, group: -1}
	i++
	if v.kind != recSitemap {
		var g int
		g, i = uvarint(a, i)
		v.group = g - 1
		v.line, i = uvarint(a, i)
		if v.kind == recLiteral {
			var l int
			l, i = uvarint(a, i)
			v.key = a[i : i+l]
			i += l
		} else {
			v.key = otherKey(v.kind)
		}
	}
	l, i := uvarint(a, i)
	v.value = a[i : i+l]
	i += l
	if v.kind == recContentUsage {
		l, i = uvarint(a, i)
		v.pattern = a[i : i+l]
		v.prefs = a[i+l]
		i += l + 1
	}
	it.i = i
	return true
}
