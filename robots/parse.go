package robots

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/encoding"
)

// DefaultMaxBytes is the default parse limit: 512 KiB, above the 500 KiB
// minimum of RFC 9309 section 2.5.
const DefaultMaxBytes = 512 << 10

// MinMaxBytes is the smallest parse limit RFC 9309 2.5 permits: 500 KiB
// ("The parsing limit MUST be at least 500 kibibytes").
const MinMaxBytes = 500 << 10

// maxMaxBytes is the largest parse limit: 1 GiB, so that the compiled form
// of any body fits 32-bit offsets.
const maxMaxBytes = 1 << 30

// DefaultMaxLineBytes is the default line length limit: 16 KiB, four times
// the longest line in the project's corpus of real files.
const DefaultMaxLineBytes = 16 << 10

// DefaultMaxRulesPerGroup is the default limit on the rules of one group:
// 65536, four times the largest group in the corpus (16,671 rules).
const DefaultMaxRulesPerGroup = 1 << 16

// Options tune parsing. The zero value is ready to use. Limits protect the
// parser (RFC 9309 2.5, 3); none of them rejects the rest of the file.
type Options struct {
	// MaxBytes is the parse limit in octets (RFC 9309 2.5). Zero means
	// DefaultMaxBytes; values under 500 KiB are raised to 500 KiB, the
	// minimum the RFC allows. Octets past the limit are ignored, and so is
	// the line the limit cuts.
	MaxBytes int
	// MaxLineBytes truncates longer lines to this many octets, as Google's
	// parser does; zero means DefaultMaxLineBytes. Counted in Robots.Limited.
	MaxLineBytes int
	// MaxRulesPerGroup drops the rule lines of a group past this many; zero
	// means DefaultMaxRulesPerGroup. Counted in Robots.Limited.
	MaxRulesPerGroup int
	// Charset is the charset the server declared for the body (the
	// Content-Type charset parameter, a WHATWG label), "" when none. It is
	// only used for lines that are not valid UTF-8, which are transcoded to
	// UTF-8 before parsing; without a usable charset they are read as
	// windows-1252 (RFC 9309 2.2.2: implementors MAY bridge encoding
	// mismatches). A rule on such a line also matches as its raw octets
	// (see Rule.Line), so that "Disallow: /gr\xf6\xdfe" disallows both
	// "/gr%C3%B6%C3%9Fe" and "/gr%F6%DFe".
	Charset string
}

// Parse compiles a robots.txt body with the default options. It never fails:
// lines that cannot be parsed are skipped (RFC 9309 2.3.1.5).
func Parse(body []byte) *Robots {
	return Options{}.Parse(body)
}

// Parse compiles a robots.txt body. It never fails: lines that cannot be
// parsed are skipped and counted in Robots.Ignored (RFC 9309 2.3.1.5). The
// result does not keep body, nor any part of it.
func (o Options) Parse(body []byte) *Robots {
	body, truncated := limit(body, o.Limit())
	size := len(body)
	body = stripBOM(body) // a partial BOM is not UTF-8: strip it first
	p := newParser(o.withDefaults(), len(body))
	p.r.Size, p.r.Truncated = size, truncated
	var enc encoding.Encoding // set when lines may need bridging (charset.go)
	if !utf8.Valid(body) {
		enc = legacyEncoding(o.Charset)
	}
	text := bytesString(body)
	for n := 1; text != ""; n++ {
		var line string
		line, text = nextLine(text)
		if enc != nil && !utf8.ValidString(line) {
			p.line(bridgeLine(line, enc), line, n)
			continue
		}
		p.line(line, "", n)
	}
	p.compile()
	return p.r
}

func (o Options) withDefaults() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxRulesPerGroup <= 0 {
		o.MaxRulesPerGroup = DefaultMaxRulesPerGroup
	}
	return o
}

// Limit returns the parse limit in force, in octets: MaxBytes, or
// DefaultMaxBytes when it is zero, never under 500 KiB (RFC 9309 2.5) and
// never over 1 GiB (the compiled form addresses its memory with 32-bit
// offsets).
func (o Options) Limit() int {
	switch {
	case o.MaxBytes == 0:
		return DefaultMaxBytes
	case o.MaxBytes < MinMaxBytes:
		return MinMaxBytes
	case o.MaxBytes > maxMaxBytes:
		return maxMaxBytes
	}
	return o.MaxBytes
}

// limit applies the parse limit (RFC 9309 2.5): body is cut to at most max
// octets, and a last line that the cut splits is dropped whole, so that a
// truncated rule can never widen or narrow what the file says.
func limit(body []byte, max int) ([]byte, bool) {
	if len(body) <= max {
		return body, false
	}
	if c := body[max]; c == '\n' || c == '\r' {
		return body[:max], true
	}
	cut := body[:max]
	for i := len(cut) - 1; i >= 0; i-- {
		if cut[i] == '\n' || cut[i] == '\r' {
			return cut[:i+1], true
		}
	}
	return nil, true
}

// stripBOM removes a UTF-8 byte order mark, or the first one or two octets
// of one, from the start of the body.
func stripBOM(b []byte) []byte {
	const bom = "\xEF\xBB\xBF"
	for n := len(bom); n > 0; n-- {
		if len(b) >= n && string(b[:n]) == bom[:n] {
			return b[n:]
		}
	}
	return b
}

// nextLine splits off the first line of s; CR, LF and CRLF all end a line
// (RFC 9309 2.2, NL).
func nextLine(s string) (line, rest string) {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		i = len(s)
	}
	if j := strings.IndexByte(s[:i], '\r'); j >= 0 {
		if j+1 < len(s) && s[j+1] == '\n' {
			return s[:j], s[j+2:]
		}
		return s[:j], s[j+1:]
	}
	if i == len(s) {
		return s, ""
	}
	return s[:i], s[i+1:]
}

// bytesString returns b as a string without copying it. The parser reads
// the body through it and copies what it keeps into the arena: no string
// that shares b outlives Parse.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// parser holds the state of one Parse call.
type parser struct {
	r    *Robots
	opts Options
	// cur is the index of the group being filled, or -1 before the first
	// user-agent line.
	cur int
	// inAgents is true while the lines read since the group started are
	// user-agent lines only; another user-agent line then joins the group.
	inAgents bool
	// prog is the arena being built: the groups' rule programs first
	// (see compile.go).
	prog []byte
	// groups are the groups so far; agents their user-agent lines,
	// group after group (their strings share the body).
	groups []pgroup
	agents []agentLine
	// recs is the records section being built.
	recs []byte
	// rules counts the current group's rule lines (a bridged line may
	// give two rules, see charset.go), usages its Content-Usage lines,
	// fileUsages those of every group (see keepUsage).
	rules, usages, fileUsages int
	// rs are the current group's rules, their patterns back to back in
	// pats and their edits in edits; emitProgram writes them to prog when
	// the group ends.
	rs          []prule
	pats, edits []byte
}

// pgroup is a group being parsed.
type pgroup struct {
	line int
	// prog is the offset of the group's rule program in the arena.
	prog int
	// agents are the indexes of its user-agent lines in parser.agents.
	agents0, agents1 int
}

// agentLine is what a user-agent line names, as written: its product
// token and its whole name (see agentName), name "" when it is the token
// or names nothing more.
type agentLine struct {
	token, name string
}

// shown is the line as Group.Agents shows it: its name, else its token.
func (a agentLine) shown() string {
	if a.name != "" {
		return a.name
	}
	return a.token
}

func newParser(o Options, size int) *parser {
	return &parser{r: &Robots{}, opts: o, cur: -1, prog: make([]byte, 0, size/2+64)}
}

// content returns what the parser reads of a line: its first MaxLineBytes
// octets, without the comment and the surrounding white space. It reports
// whether the line was truncated.
func (p *parser) content(line string) (string, bool) {
	cut := len(line) > p.opts.MaxLineBytes
	if cut {
		line = line[:p.opts.MaxLineBytes]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i] // RFC 9309 2.2.3: "#" starts a comment.
	}
	return trimWS(line), cut
}

// line handles line n of the file. raw is the line as sent when line is
// its bridged reading (see charset.go), else "".
func (p *parser) line(line, raw string, n int) {
	text, cut := p.content(line)
	if cut {
		p.r.Limited++
	}
	if text == "" {
		return
	}
	k, key, value := splitRecord(text)
	switch k {
	case keyUserAgent:
		p.userAgent(value, n)
	case keyAllow, keyDisallow:
		if p.rule(k == keyAllow, value, n) && raw != "" {
			p.rawTwin(k, value, raw)
		}
	case keySitemap:
		p.recs = append(p.recs, recSitemap)
		p.recs = appendUvarint(p.recs, uint64(len(value)))
		p.recs = append(p.recs, value...)
	case keyOther:
		p.record(key, value, n)
	default:
		p.r.Ignored++
	}
}

// userAgent handles a user-agent line (RFC 9309 2.2.1): it starts a new
// group unless it directly follows another user-agent line.
func (p *parser) userAgent(value string, n int) {
	if !p.inAgents {
		p.endGroup()
		p.groups = append(p.groups, pgroup{line: n, prog: len(p.prog), agents0: len(p.agents)})
		p.cur = len(p.groups) - 1
		p.inAgents = true
		p.rules, p.usages = 0, 0
	}
	p.agents = append(p.agents, readAgent(value))
	p.groups[p.cur].agents1 = len(p.agents)
}

// endGroup writes the rule program of the current group, if any.
func (p *parser) endGroup() {
	if p.cur < 0 {
		return
	}
	p.emitProgram()
	p.rs, p.pats, p.edits = p.rs[:0], p.pats[:0], p.edits[:0]
}

// rule handles an allow or disallow line (RFC 9309 2.2.2): it adds the rule
// to the current group and reports whether it did. Rules outside any group
// are ignored, and so are rule lines past MaxRulesPerGroup.
func (p *parser) rule(allow bool, value string, n int) bool {
	if p.cur < 0 {
		p.r.Ignored++
		return false
	}
	p.inAgents = false
	if p.rules >= p.opts.MaxRulesPerGroup {
		p.r.Limited++
		return false
	}
	p.rules++
	r := prule{line: n, pat: len(p.pats), edits0: len(p.edits)}
	if allow {
		r.flags |= fAllow
	}
	p.pats, p.edits = appendPattern(p.pats, p.edits, value)
	p.push(r)
	return true
}

// push adds rule r, whose pattern and edits are the last appended to
// p.pats and p.edits, to the current group, completing its length and
// flags.
func (p *parser) push(r prule) {
	pat := p.pats[r.pat:]
	r.n, r.edits1 = len(pat), len(p.edits)
	if len(pat) > 0 && (pat[len(pat)-1] == '$' || bytes.IndexByte(pat, '*') >= 0) {
		r.flags |= fWild
	}
	if r.edits1 > r.edits0 {
		r.flags |= fEdits
	}
	p.rs = append(p.rs, r)
}

// record handles a record that is not a rule, a user-agent or a sitemap
// (RFC 9309 2.2.4); key is as written. None of them ends a group (2.2.4),
// Content-Usage included (see usage.go). Content-Usage lines past the
// limits of keepUsage are dropped and counted in Robots.Limited.
func (p *parser) record(key, value string, n int) {
	code := otherKeyCode(key)
	if code == recContentUsage && p.cur >= 0 && !p.keepUsage() {
		return
	}
	p.r.extras |= extraFlag(code, p.cur >= 0)
	p.recs = append(p.recs, code)
	p.recs = appendUvarint(p.recs, uint64(p.cur+1))
	p.recs = appendUvarint(p.recs, uint64(n))
	if code == recLiteral {
		p.recs = appendUvarint(p.recs, uint64(len(key)))
		for i := 0; i < len(key); i++ {
			c := key[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			p.recs = append(p.recs, c)
		}
	}
	p.recs = appendUvarint(p.recs, uint64(len(value)))
	p.recs = append(p.recs, value...)
	if code == recContentUsage {
		p.recs = appendUsage(p.recs, value)
	}
}

// productToken extracts the product token from a user-agent value
// (RFC 9309 2.2.1): "*" when the value is "*" alone or followed by white
// space, otherwise the longest prefix made of identifier characters
// (letters, "_" and "-"). "Googlebot/2.1" gives "Googlebot", "Foo Bar" gives
// "Foo", "AB42bot" gives "AB" (the conformance suite's reading). It returns
// "" when the value starts with anything else.
func productToken(value string) string {
	if value == "*" || strings.HasPrefix(value, "* ") || strings.HasPrefix(value, "*\t") {
		return "*"
	}
	for i := 0; i < len(value); i++ {
		if !IsIdentChar(value[i]) {
			return value[:i]
		}
	}
	return value
}

// readAgent returns what a user-agent value names: its product token and,
// when it differs, its whole name.
func readAgent(value string) agentLine {
	a := agentLine{token: productToken(value)}
	if n := agentName(value); n != a.token {
		a.name = n
	}
	return a
}

// agentName returns the whole name a user-agent value starts with, for
// the name rule (see IsAgentName): its leading run of RFC 9110 token
// characters when that run is an agent name ("MJ12bot" from
// "MJ12bot/1.4", "360Spider", "omgili.com"), else "".
func agentName(value string) string {
	i := 0
	for i < len(value) && IsTokenChar(value[i]) {
		i++
	}
	if !IsAgentName(value[:i]) {
		return ""
	}
	return value[:i]
}

// IsProductToken reports whether s is a product token as RFC 9309 2.2.1
// allows it in a user-agent line: one or more of a-z, A-Z, "_" and "-".
func IsProductToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !IsIdentChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// IsAgentName reports whether s is a name that matches the groups whose
// user-agent lines name it whole, case-insensitively: an RFC 9309
// product token (letters, "_" and "-", section 2.2.1), or a run of RFC
// 9110 token characters that starts with a letter or a digit and holds a
// letter, such as "MJ12bot", "360Spider", "img2dataset" or
// "Mail.RU_Bot". "*", "+http" and version-like runs ("5.0") are not
// names.
//
// This is the name rule, a deliberate reading beyond RFC 9309: 2.2.1 asks
// a crawler's own product token to be letters, "_" and "-", and says
// nothing of the sites that name crawlers whose names have digits or dots.
// Such a site means that crawler, and the crawler obeys the line, so a
// group applies to the crawler by the name it wrote as well as by its
// product token ("User-agent: MJ12bot" is named by both "MJ" and
// "MJ12bot"). The crawler's side (robotsproxy's identity package) draws
// its candidates with this same function.
func IsAgentName(s string) bool {
	if s == "" {
		return false
	}
	letter, ident := false, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		case c == '_' || c == '-':
		case IsTokenChar(c):
			ident = false
		default:
			return false
		}
	}
	if ident {
		return true // an RFC 9309 product token
	}
	c := s[0]
	return letter && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}

// IsIdentChar reports whether c may appear in a product token: the RFC 9309
// identifier alphabet of letters, "_" and "-" (section 2.2, 2.2.1).
func IsIdentChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// IsTokenChar reports whether c is an RFC 9110 tchar, one of the octets of
// an HTTP token: ALPHA, DIGIT and !#$%&'*+-.^_`|~.
func IsTokenChar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// trimWS removes RFC 9309 white space (space and tab) from both ends.
func trimWS(s string) string {
	return strings.Trim(s, " \t")
}
