package robots

// Bits of Robots.extras: the kinds of records the file has that Extras and
// Usage read.
const (
	xDelay   = 1 << 0 // a crawl-delay or request-rate record in a group
	xUsage   = 1 << 1 // a Content-Usage record in a group
	xSignal  = 1 << 2 // a Content-Signal record, in a group or before any
	xLicense = 1 << 3 // a License record (RSL 1.0), anywhere in the file
)

// extraFlag returns the bit of Robots.extras for a record kind, 0 for the
// kinds that Extras and Usage do not read; inGroup is false before the
// first user-agent line, where only Content-Signal counts.
func extraFlag(kind byte, inGroup bool) uint8 {
	switch {
	case kind == recContentSignal:
		return xSignal
	case kind == recLicense:
		return xLicense
	case !inGroup:
		return 0
	case kind == recCrawlDelay || kind == recCrawlDelay2 || kind == recRequestRate:
		return xDelay
	case kind == recContentUsage:
		return xUsage
	}
	return 0
}

// setLists is how many token entries a groupSet holds without allocating.
const setLists = 4

// groupSet is the set of groups that apply to a crawler: those of every one
// of its product tokens that has any, merged (RFC 9309 2.2.1), else those of
// "*", the same groups Robots.Test matches against. Membership is tested in
// file order, that is for group indexes that never decrease (has), so that
// the records of a file are filtered in one walk.
type groupSet struct {
	// agent is the lower-cased first token that has groups, "*" when the
	// catch-all group applies, "" when none does; fallback is true for "*".
	agent    string
	fallback bool
	// lists are the (group index, program offset) lists of the token
	// entries that apply (see entryAt), pos the cursors of has.
	lists [setLists]string
	pos   [setLists]int
	n     int
	// more holds the lists past setLists, morePos their cursors.
	more    []string
	morePos []int
}

// selectGroups fills s with the groups that apply to tokens.
func (r *Robots) selectGroups(tokens []string, s *groupSet) {
	for _, t := range tokens {
		if t == "*" {
			continue
		}
		e := r.lookup(t)
		if e < 0 {
			continue
		}
		name, groups := entryAt(r.a, e)
		if s.agent == "" {
			s.agent = name
		}
		s.add(groups)
	}
	if s.agent == "" && r.star != 0 {
		_, groups := entryAt(r.a, int(r.star-1))
		s.agent, s.fallback = "*", true
		s.add(groups)
	}
}

// add adds the groups of a token entry.
func (s *groupSet) add(groups string) {
	if s.n < setLists {
		s.lists[s.n] = groups
		s.n++
		return
	}
	s.more = append(s.more, groups)
	s.morePos = append(s.morePos, 0)
}

// has reports whether group g applies. Successive calls must not decrease
// g.
func (s *groupSet) has(g int) bool {
	found := false
	for k := 0; k < s.n; k++ {
		if advance(s.lists[k], &s.pos[k], g) {
			found = true
		}
	}
	for k := range s.more {
		if advance(s.more[k], &s.morePos[k], g) {
			found = true
		}
	}
	return found
}

// advance moves the cursor *pos of a (group index, program offset) list
// past the groups before g and reports whether the list holds g.
func advance(list string, pos *int, g int) bool {
	for *pos < len(list) {
		gi, next := uvarint(list, *pos)
		if gi == g {
			return true
		}
		if gi > g {
			return false
		}
		_, *pos = uvarint(list, next)
	}
	return false
}

// recRefs lists the offsets of records (see recIter) in file order; the
// first few without allocating.
type recRefs struct {
	first [4]uint32
	n     int
	more  []uint32
}

func (r *recRefs) add(at int) {
	if r.n < len(r.first) {
		r.first[r.n] = uint32(at)
	} else {
		r.more = append(r.more, uint32(at))
	}
	r.n++
}

func (r *recRefs) reset() {
	r.n, r.more = 0, r.more[:0]
}

// at returns the i-th offset.
func (r *recRefs) at(i int) int {
	if i < len(r.first) {
		return int(r.first[i])
	}
	return int(r.more[i-len(r.first)])
}

// view decodes the i-th record into v.
func (r *recRefs) view(a string, i int, v *recView) {
	it := recIter{a: a, i: r.at(i)}
	it.next(v)
}
