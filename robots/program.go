package robots

import "slices"

// prule is a rule of the group being parsed.
type prule struct {
	flags int // fAllow, fWild, fEdits
	n     int // pattern length
	line  int
	// pat is the offset of the pattern in parser.pats, edits0 and edits1
	// delimit its edits in parser.edits.
	pat, edits0, edits1 int
}

// Bounds of bucketed programs (see compile.go): smaller groups gain
// nothing, and larger ones would not fit the one-octet offsets.
const (
	bucketMinRules = 6
	bucketMaxRules = 255
)

// emitProgram appends the current group's rule program to the arena,
// bucketed when it can be, else linear (see compile.go).
func (p *parser) emitProgram() {
	if len(p.rs) >= bucketMinRules && len(p.rs) <= bucketMaxRules && p.emitBucketed() {
		return
	}
	p.emitLinear()
}

// appendHeader appends the header of a rule with the given flags.
func appendHeader(b []byte, r prule, flags int) []byte {
	b = append(b, byte(min(r.n, hdrLong)<<hdrShift|flags))
	if r.n >= hdrLong {
		b = appendUvarint(b, uint64(r.n-hdrLong))
	}
	return b
}

// appendEdits appends the varint length and the edits of a rule.
func (p *parser) appendEdits(b []byte, r prule) []byte {
	b = appendUvarint(b, uint64(r.edits1-r.edits0))
	return append(b, p.edits[r.edits0:r.edits1]...)
}

// emitLinear appends a linear program: rules in file order, lines as
// deltas.
func (p *parser) emitLinear() {
	var hdrs, extras []byte
	last := 0
	for _, r := range p.rs {
		flags := r.flags
		if r.line != last+1 {
			flags |= fLine
			extras = appendUvarint(extras, uint64(r.line-last))
		}
		if flags&fEdits != 0 {
			extras = p.appendEdits(extras, r)
		}
		hdrs = appendHeader(hdrs, r, flags)
		last = r.line
	}
	p.prog = appendUvarint(p.prog, uint64(len(hdrs))<<1)
	p.prog = append(p.prog, hdrs...)
	p.prog = appendUvarint(p.prog, uint64(len(extras)))
	p.prog = append(p.prog, extras...)
	p.prog = append(p.prog, p.pats...)
}

// bucketKey returns the bucket of a rule: the second octet of its pattern
// when the pattern starts with at least two literal octets (no "*" among
// them, not the final "$"), else 0, the bucket of rules any path may match.
func (p *parser) bucketKey(r prule) byte {
	pat := p.pats[r.pat : r.pat+r.n]
	if len(pat) < 2 || pat[0] == '*' || pat[1] == '*' || r.flags&fWild != 0 && len(pat) == 2 && pat[1] == '$' {
		return 0
	}
	return pat[1]
}

// emitBucketed appends a bucketed program, or reports false when the
// group does not fit one or has a single bucket.
func (p *parser) emitBucketed() bool {
	type keyed struct {
		key byte
		i   int
	}
	order := make([]keyed, len(p.rs))
	lo, hi := p.rs[0].line, p.rs[0].line
	for i, r := range p.rs {
		order[i] = keyed{p.bucketKey(r), i}
		lo, hi = min(lo, r.line), max(hi, r.line)
	}
	if len(p.pats) >= 1<<16 || hi-lo >= 1<<16 {
		return false
	}
	slices.SortStableFunc(order, func(a, b keyed) int { return int(a.key) - int(b.key) })
	var hdrs, extras, keys, ents, pats []byte
	width := 1
	if hi-lo >= 1<<8 {
		width = 2
	}
	lines := make([]byte, 0, width*len(order))
	for k, o := range order {
		r := p.rs[o.i]
		if k == 0 || o.key != order[k-1].key {
			keys = append(keys, o.key)
			ents = append(ents, byte(k), byte(len(hdrs)), byte(len(pats)), byte(len(pats)>>8))
		}
		hdrs = appendHeader(hdrs, r, r.flags)
		if r.flags&fEdits != 0 {
			extras = p.appendEdits(extras, r)
		}
		pats = append(pats, p.pats[r.pat:r.pat+r.n]...)
		d := r.line - lo
		lines = append(lines, byte(d))
		if width == 2 {
			lines = append(lines, byte(d>>8))
		}
	}
	if len(keys) < 2 || len(hdrs) > 0xFF || len(extras) >= 1<<16 || lo >= 1<<24 {
		return false
	}
	ents = append(ents, byte(len(order)), byte(len(hdrs)), byte(len(pats)), byte(len(pats)>>8))
	p.prog = appendUvarint(p.prog, uint64(len(hdrs))<<1|1)
	p.prog = append(p.prog, byte(len(keys)), byte(len(order)), byte(width),
		byte(lo), byte(lo>>8), byte(lo>>16), byte(len(extras)), byte(len(extras)>>8))
	p.prog = append(p.prog, keys...)
	p.prog = append(p.prog, ents...)
	p.prog = append(p.prog, hdrs...)
	p.prog = append(p.prog, extras...)
	p.prog = append(p.prog, lines...)
	p.prog = append(p.prog, pats...)
	return true
}
