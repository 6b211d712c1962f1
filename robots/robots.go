package robots

import (
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/heapsize"
)

// Rule is one allow or disallow line of a group (RFC 9309 2.2.2). It is a
// small value decoded from the compiled file: Pattern shares the compiled
// file's memory, so returning a Rule never allocates, and Text is rebuilt
// on demand. The zero Rule (Line 0) stands for "no rule".
type Rule struct {
	// Allow is true for an allow rule, false for a disallow rule.
	Allow bool
	// Pattern is the path pattern after percent-encoding normalisation
	// (see NormalizePath), with "*" wildcards and an optional final "$".
	// Its length in octets is the rule's specificity.
	Pattern string
	// Line is the 1-based line number of the rule in the file. Two rules
	// of the same kind share a line when the line is not UTF-8 and its
	// bridged and raw readings give different patterns (see
	// Options.Charset); the bridged one comes first and Text shows the
	// bridged value for both.
	Line int

	// edits rebuild the value as written from Pattern (see appendPattern);
	// empty when the value was written in normal form. A raw twin's start
	// with twinMark, followed by the value as bridged (see charset.go).
	edits string
}

// Text returns the rule in a canonical form of the line as written: the key
// "Allow" or "Disallow" (whatever spelling, case or separator the file
// used), ": " and the value exactly as written, without comment and
// surrounding white space, e.g. "Disallow: /a%7e/$x". A line that is not
// UTF-8 shows as bridged to UTF-8 (see Options.Charset), by both of its
// rules. A rule with an empty value gives "Disallow:". The zero Rule gives
// "". Text allocates.
func (r Rule) Text() string {
	if r.Line == 0 {
		return ""
	}
	key, v := r.written()
	if v == "" {
		return key + ":"
	}
	return key + ": " + v
}

// AppendText appends Text's form of the rule to b and returns the
// extended buffer. It allocates only when b has no room, or when the value
// as written is not in normal form (see Rule.Pattern).
func (r Rule) AppendText(b []byte) []byte {
	if r.Line == 0 {
		return b
	}
	key, v := r.written()
	b = append(b, key...)
	if v == "" {
		return append(b, ':')
	}
	return append(append(b, ": "...), v...)
}

// written returns the rule's key and its value as written.
func (r Rule) written() (key, value string) {
	key = "Disallow"
	if r.Allow {
		key = "Allow"
	}
	value = r.Pattern
	switch {
	case isTwin(r.edits):
		value = r.edits[len(twinMark):]
	case r.edits != "":
		value = denormalize(r.Pattern, r.edits)
	}
	return key, value
}

// Group is one group of the file (RFC 9309 2.1): user-agent lines followed
// by rules. Groups are decoded on demand by Robots.Group and Robots.Groups.
type Group struct {
	// Agents are what the group's user-agent lines name, as written (case
	// kept): the whole name when it is more than the product token
	// ("MJ12bot", see IsAgentName), else the product token; "*" for the
	// catch-all group, "" for a value that names nothing.
	Agents []string
	// Line is the 1-based line number of the group's first user-agent line.
	Line int
	// Rules are the group's allow and disallow rules in file order.
	Rules []Rule
}

// Record is a line that is neither a user-agent line, a rule nor a sitemap,
// such as "crawl-delay: 10" or "host: example.com" (RFC 9309 2.2.4). It is
// kept for callers (see Robots.Records) and never affects matching; the
// records the package interprets are read by Robots.Extras and
// Robots.Usage.
type Record struct {
	// Key is the record's key, lower-cased ("crawl-delay").
	Key string
	// Value is the value with surrounding white space removed.
	Value string
	// Line is the 1-based line number.
	Line int
	// Group is the index (see Robots.Group) of the group the record
	// appeared in, or -1 when it came before the first user-agent line.
	Group int
}

// Robots is a compiled robots.txt file. It is immutable once returned by
// Parse, and safe for concurrent use.
//
// Everything the file says is kept in one string, the arena, whose layout
// is described in compile.go; the file's own text is not kept. Groups,
// records and sitemaps are decoded from it on demand (Group, Groups,
// Records, Sitemaps).
type Robots struct {
	// Size is the number of octets parsed: at most the parse limit.
	Size int
	// Ignored counts lines that were neither empty, a comment, nor a
	// parseable record, plus rules outside any group.
	Ignored int
	// Limited counts lines truncated by Options.MaxLineBytes, rules
	// dropped by Options.MaxRulesPerGroup and Content-Usage lines dropped
	// by it or by MaxContentUsageRules.
	Limited int

	// a is the arena (see compile.go).
	a string
	// Truncated is true when the body was longer than the parse limit and
	// its tail was ignored (RFC 9309 2.5).
	Truncated bool
	// slotBits is log2 of the number of hash slots of the token table, 0
	// when no group names a token other than "*".
	slotBits uint8
	// slotWide is true when hash slots take 4 octets instead of 2.
	slotWide bool
	// extras has a bit (xDelay, xUsage, xSignal) for each kind of record
	// that Extras and Usage read, when the file has one: a file without
	// any is answered without walking its records. It takes a byte of
	// padding: the struct keeps its size.
	extras uint8
	// lengths has bit len%32 set for the length of every named product
	// token other than "*": most lookups of a token no group names stop
	// there.
	lengths uint32
	// star is 1 + the offset of the token entry of "*", 0 when no group
	// names it.
	star uint32
	// slots is the offset of the hash slots, groups of the group table,
	// records of the records.
	slots, groups, records uint32
}

// Retained returns the octets the compiled form keeps live beyond the
// Robots value itself: its arena, the one string that holds every group,
// rule and record (see compile.go), as the Go allocator takes it (rounded
// up to its size class, or to whole pages past 32 KiB). A cache can
// account for a file by it (robotsproxy's cache.max_bytes).
func (r *Robots) Retained() int { return heapsize.String(r.a) }

// Verdict is the answer of Test: whether a path may be fetched, and why.
// It holds no pointer into memory of its own: returning it never allocates.
type Verdict struct {
	// Allowed is the decision.
	Allowed bool
	// Fallback is true when none of the crawler's product tokens had a group
	// and the "*" group was used (RFC 9309 2.2.1).
	Fallback bool
	// Implicit is true when the path is /robots.txt, which is always
	// allowed (RFC 9309 2.2.2).
	Implicit bool
	// Rule is the deciding rule (the longest match), or the zero Rule when
	// no rule matched or the path is /robots.txt; see Matched.
	Rule Rule
	// Agent is the lower-cased product token or name (see IsAgentName)
	// whose groups applied, "*" when
	// the catch-all group applied, or "" when no group applied.
	Agent string

	// groups lists the groups that applied, as the token entry stores them
	// (see compile.go).
	groups string
}

// Matched reports whether a rule decided the verdict, that is whether
// v.Rule is set.
func (v Verdict) Matched() bool { return v.Rule.Line != 0 }

// Groups returns the indexes (see Robots.Group) of the groups that applied,
// merged (RFC 9309 2.2.1), in file order; nil when none did. It allocates.
func (v Verdict) Groups() []int {
	var out []int
	for i := 0; i < len(v.groups); {
		var g int
		g, i = uvarint(v.groups, i)
		_, i = uvarint(v.groups, i)
		out = append(out, g)
	}
	return out
}

// HasGroup reports whether any group names the product token
// (case-insensitively). "*" asks for the catch-all group.
func (r *Robots) HasGroup(token string) bool {
	if token == "*" {
		return r.star != 0
	}
	return r.lookup(token) >= 0
}

// Test decides whether a crawler identified by the given product tokens may
// fetch path (RFC 9309 2.2). path is the URI's path and query, such as
// "/a/b?c=d"; it is normalised with NormalizePath first. The groups of every
// token that has one apply, merged (2.2.1); a group has a token when one of
// its user-agent lines names it, by its product token or by its whole name
// (the name rule, see IsAgentName); if no token has a group, the "*"
// group applies; if there is none either, the path is allowed.
//
// Test does not allocate when path is already normalised.
func (r *Robots) Test(path string, tokens ...string) (v Verdict) {
	r.decide(NormalizePath(path), tokens, &v)
	return v
}

// TestNormalized is Test for a path already normalised with NormalizePath.
func (r *Robots) TestNormalized(path string, tokens ...string) (v Verdict) {
	r.decide(path, tokens, &v)
	return v
}

// decide is Test for a normalised path; v is the zero Verdict on entry.
func (r *Robots) decide(path string, tokens []string, v *Verdict) {
	if IsRobotsTxt(path) {
		v.Allowed, v.Implicit = true, true
		return
	}
	var m matcher
	m.a, m.path, m.pw, m.bestAllow = r.a, path, load8pad(path), true
	for _, t := range tokens {
		if t == "*" {
			continue
		}
		e := r.lookup(t)
		if e < 0 {
			continue
		}
		name, groups := entryAt(r.a, e)
		if v.Agent == "" {
			v.Agent, v.groups = name, groups
		}
		if m.scanEntry(groups) {
			v.Agent, v.groups = name, groups
		}
	}
	if v.Agent == "" && r.star != 0 {
		_, groups := entryAt(r.a, int(r.star-1))
		v.Agent, v.groups, v.Fallback = "*", groups, true
		m.scanEntry(groups)
	}
	if !m.found {
		v.Allowed = true
		return
	}
	m.locate(&v.Rule)
	v.Allowed = v.Rule.Allow
}

// IsRobotsTxt reports whether a normalised path names /robots.txt itself,
// with or without a query: the URI RFC 9309 2.2.2 implicitly allows.
func IsRobotsTxt(path string) bool {
	rest, ok := strings.CutPrefix(path, "/robots.txt")
	return ok && (rest == "" || rest[0] == '?')
}

// matcher finds the deciding rule for one path among the rules of the groups
// that apply: the longest matching pattern, allow winning a tie, and the
// first in file order among equals (RFC 9309 2.2.2).
type matcher struct {
	a    string
	path string
	// pw is the first 8 octets of path, zero-padded. Normalised patterns
	// never contain a zero octet, so comparing pattern octets past the end
	// of the path against the padding fails, as it must.
	pw uint64
	// bestLen and bestAllow describe the best match so far; before any
	// match bestAllow is true, so that a rule must be strictly longer than
	// bestLen (0) to win.
	bestLen   int
	bestAllow bool
	// found is true once a rule matched; bestProg is then the offset of
	// the best rule's program.
	found    bool
	bestProg int
	// bestK is the best rule's index in its program, bestHdr its header,
	// bestPat the offset of its pattern, bestLine its line when known (in
	// a bucketed program), else 0.
	bestK    int
	bestHdr  int
	bestPat  int
	bestLine int
}

// scanEntry scans the programs of the groups listed in a token entry (see
// entryAt), in file order. It reports whether the best match changed.
func (m *matcher) scanEntry(groups string) bool {
	improved := false
	for i := 0; i < len(groups); {
		var prog int
		_, i = uvarint(groups, i)
		prog, i = uvarint(groups, i)
		if m.scan(prog) {
			improved = true
		}
	}
	return improved
}

// scan runs one group's rule program (see compile.go), starting at offset
// prog of the arena. It reports whether the best match changed.
func (m *matcher) scan(prog int) bool {
	a := m.a
	hl, d := uvarint(a, prog)
	if hl&1 == 0 {
		end := d + hl>>1
		xl, p := uvarint(a, end)
		return m.scanRange(prog, d, end, p+xl, 0, lineTable{})
	}
	// A bucketed program: the bucket of the path's second octet, and the
	// bucket of rules any path may match (key 0, first when present).
	keys, ents, hs, lines, pats := bucketedLayout(a, d, hl>>1)
	found := false
	for j := 0; j < 2; j++ {
		e := ents // the bucket of key 0
		if j == 0 {
			if keys[0] != 0 {
				continue
			}
		} else {
			if len(m.path) < 2 {
				break
			}
			b := strings.IndexByte(keys, m.path[1])
			if b < 0 || b == 0 && keys[0] == 0 {
				break
			}
			e += 4 * b
		}
		k, h0, h1, q := int(a[e]), int(a[e+1]), int(a[e+5]), int(a[e+2])|int(a[e+3])<<8
		if m.scanRange(prog, hs+h0, hs+h1, pats+q, k, lines) {
			found = true
		}
	}
	return found
}

// lineTable gives the lines of the rules of a bucketed program; its zero
// value stands for a linear program.
type lineTable struct {
	at, base, width int
}

// line returns the line of rule k.
func (t lineTable) line(a string, k int) int {
	if t.width == 1 {
		return t.base + int(a[t.at+k])
	}
	return t.base + (int(a[t.at+2*k]) | int(a[t.at+2*k+1])<<8)
}

// bucketedLayout decodes the layout of a bucketed program (see compile.go)
// whose headers take hl octets and whose fixed part starts at offset d:
// its bucket keys, the offsets of its directory entries and of its
// headers, its line table, and the offset of its patterns. Its extras
// start at hs+hl.
func bucketedLayout(a string, d, hl int) (keys string, ents, hs int, lines lineTable, pats int) {
	f := a[d : d+8]
	nb, n := int(f[0]), int(f[1])
	lines.width = int(f[2])
	lines.base = int(f[3]) | int(f[4])<<8 | int(f[5])<<16
	xl := int(f[6]) | int(f[7])<<8
	keys = a[d+8 : d+8+nb]
	ents = d + 8 + nb
	hs = ents + 4*(nb+1)
	lines.at = hs + hl + xl
	return keys, ents, hs, lines, lines.at + n*lines.width
}

// scanRange scans the rules whose headers are at offsets i to end of the
// arena, the first of them rule k of its program, its pattern at offset p.
// It reports whether the best match changed.
//
// The walk over the headers advances by one octet per rule (more only for
// patterns of hdrLong octets or more), and the pattern offset by an
// addition, so that consecutive rules do not wait on each other's loads.
// Line numbers and edits are left for the winner (see locate).
func (m *matcher) scanRange(prog, i, end, p, k int, lines lineTable) bool {
	a, pw := m.a, m.pw
	found := false
	k--
	for i < end {
		// The fast walk: skip the rules whose literal octets among the
		// first 8 differ from the path's.
		var h, n, q int
		for {
			h = int(a[i])
			i++
			k++
			n = h >> hdrShift
			if n == hdrLong {
				var ext int
				ext, i = uvarint(a, i)
				n += ext
			}
			q = p
			p += n
			pat := load8(a, q)
			lit := uint(n)
			if h&fWild != 0 {
				lit = wildLiteral(pat, n, a[q+n-1])
			}
			if (pat^pw)&masks[min(lit, 8)] == 0 {
				break
			}
			if i >= end {
				return found
			}
		}
		if m.better(prog, k, q, n, h, lines) {
			found = true
		}
	}
	return found
}

// wildLiteral returns how many octets a wildcard pattern of n octets starts
// with before its first "*" or its final "$", counting up to 8; pat is its
// first 8 octets, last its last octet.
func wildLiteral(pat uint64, n int, last byte) uint {
	lit := min(firstFlagged(zeroOctets(pat^'*'*lo8)), n)
	if lit == n && last == '$' {
		lit--
	}
	return uint(lit)
}

// better checks rule k of the program at offset prog, with header h and
// pattern of n octets at offset q, whose first 8 octets passed the fast
// walk's check: if it matches the path and beats the best match so far
// (RFC 9309 2.2.2: the longest pattern, allow on a tie, then the first in
// file order), it becomes the best match and better reports true.
func (m *matcher) better(prog, k, q, n, h int, lines lineTable) bool {
	allow := h&fAllow != 0
	line := 0
	switch {
	case n == 0 || n < m.bestLen:
		return false // an empty pattern never matches
	case n > m.bestLen || allow && !m.bestAllow:
	case !allow && m.bestAllow:
		return false
	case lines.width == 0 || m.bestProg != prog:
		return false // a tie: the best comes first in file order
	default:
		// A tie within a bucketed program, which is not in file order.
		if line = lines.line(m.a, k); line > m.bestLine {
			return false
		}
	}
	if h&fWild != 0 {
		if !matchWild(m.a[q:q+n], m.path) {
			return false
		}
	} else if n > 8 && (len(m.path) < n || m.path[8:n] != m.a[q+8:q+n]) {
		return false
	}
	if lines.width != 0 && line == 0 {
		line = lines.line(m.a, k)
	}
	m.bestLen, m.bestAllow, m.found = n, allow, true
	m.bestProg, m.bestK, m.bestHdr, m.bestPat, m.bestLine = prog, k, h, q, line
	return true
}

// locate decodes the best match. The line of a rule of a linear program,
// and its edits, take a walk of the program's extras (see compile.go),
// unless the program's rules are on consecutive lines and were all written
// in normal form.
func (m *matcher) locate(r *Rule) {
	a, n := m.a, m.bestLen
	r.Allow, r.Pattern = m.bestAllow, a[m.bestPat:m.bestPat+n]
	hl, i := uvarint(a, m.bestProg)
	var x int
	if hl&1 != 0 {
		r.Line = m.bestLine
		if m.bestHdr&fEdits == 0 {
			return
		}
		_, _, i, _, _ = bucketedLayout(a, i, hl>>1)
		x = i + hl>>1
	} else {
		var xl int
		xl, x = uvarint(a, i+hl>>1)
		if first, x1 := uvarint(a, x); x1 == x+xl {
			// Only the first rule has extras: its line.
			r.Line = first + m.bestK
			return
		}
	}
	line := 0
	for k := 0; ; k++ {
		h := int(a[i])
		i++
		if h>>hdrShift == hdrLong {
			_, i = uvarint(a, i)
		}
		if h&fLine != 0 {
			var d int
			d, x = uvarint(a, x)
			line += d
		} else {
			line++
		}
		if h&fEdits != 0 {
			var l int
			l, x = uvarint(a, x)
			if k == m.bestK {
				r.edits = a[x : x+l]
			}
			x += l
		}
		if k == m.bestK {
			if m.bestLine == 0 {
				r.Line = line
			}
			return
		}
	}
}

// entryAt decodes the token entry at offset e: the lower-cased token and
// its list of (group index, program offset) pairs.
func entryAt(a string, e int) (name, groups string) {
	n, i := uvarint(a, e)
	name = a[i : i+n]
	l, i := uvarint(a, i+n)
	return name, a[i : i+l]
}

// lookup returns the offset of the token entry of a product token, compared
// case-insensitively (ASCII), or -1. It does not allocate.
func (r *Robots) lookup(t string) int {
	if r.lengths&(1<<(len(t)&31)) == 0 || t == "" {
		return -1
	}
	w1, w2 := tokenWords(t)
	mask := 1<<r.slotBits - 1
	for s := tokenHash(w1, w2, len(t), r.slotBits); ; s = (s + 1) & mask {
		var e int
		if r.slotWide {
			o := int(r.slots) + 4*s
			e = int(r.a[o]) | int(r.a[o+1])<<8 | int(r.a[o+2])<<16 | int(r.a[o+3])<<24
		} else {
			o := int(r.slots) + 2*s
			e = int(r.a[o]) | int(r.a[o+1])<<8
		}
		if e == 0 {
			return -1
		}
		if tokenIs(r.a, e-1, t, w1, w2) {
			return e - 1
		}
	}
}

// tokenWords returns the first and the last 8 octets of t, lower-cased and,
// when t is shorter than 8 octets, zero-padded (both are then the same).
func tokenWords(t string) (uint64, uint64) {
	if len(t) < 8 {
		w := lower8(load8pad(t))
		return w, w
	}
	return lower8(load8(t, 0)), lower8(load8(t, len(t)-8))
}

// tokenHash maps a token's words and length to a slot of a table of
// 1<<bits slots.
func tokenHash(w1, w2 uint64, n int, bits uint8) int {
	h := (w1 ^ (w2<<29 | w2>>35) ^ uint64(n)) * 0x9E3779B97F4A7C15
	return int(h >> (64 - bits))
}

// tokenIs reports whether the entry at e names t (lower-cased words w1, w2).
func tokenIs(a string, e int, t string, w1, w2 uint64) bool {
	n, i := uvarint(a, e)
	if n != len(t) {
		return false
	}
	if n <= 8 {
		return load8(a, i)&masks[n] == w1
	}
	if load8(a, i) != w1 || load8(a, i+n-8) != w2 {
		return false
	}
	for j := 8; j < n-8; j++ {
		c := t[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != a[i+j] {
			return false
		}
	}
	return true
}
