package robots

import "strings"

// DefaultMaxBytes is the default parse limit: 512 KiB, above the 500 KiB
// minimum of RFC 9309 section 2.5.
const DefaultMaxBytes = 512 << 10

// minMaxBytes is the smallest parse limit RFC 9309 2.5 permits: 500 KiB.
const minMaxBytes = 500 << 10

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
	// MaxRulesPerGroup drops the rules of a group past this many; zero means
	// DefaultMaxRulesPerGroup. Counted in Robots.Limited.
	MaxRulesPerGroup int
}

// Parse compiles a robots.txt body with the default options. It never fails:
// lines that cannot be parsed are skipped (RFC 9309 2.3.1.5).
func Parse(body []byte) *Robots {
	return Options{}.Parse(body)
}

// Parse compiles a robots.txt body. It never fails: lines that cannot be
// parsed are skipped and counted in Robots.Ignored (RFC 9309 2.3.1.5).
func (o Options) Parse(body []byte) *Robots {
	body, truncated := limit(body, o.Limit())
	p := parser{r: &Robots{Size: len(body), Truncated: truncated}, cur: -1, opts: o.withDefaults()}
	text := string(stripBOM(body))
	for n := 1; text != ""; n++ {
		var line string
		line, text = nextLine(text)
		p.line(line, n)
	}
	p.r.byAgent = buildIndex(p.r.Groups)
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
// DefaultMaxBytes when it is zero, and never under 500 KiB (RFC 9309 2.5).
func (o Options) Limit() int {
	switch {
	case o.MaxBytes == 0:
		return DefaultMaxBytes
	case o.MaxBytes < minMaxBytes:
		return minMaxBytes
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
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:]
	}
	return s[:i], s[i+1:]
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
}

// line handles one line of the file.
func (p *parser) line(raw string, n int) {
	text := raw
	if len(text) > p.opts.MaxLineBytes {
		text = text[:p.opts.MaxLineBytes]
		p.r.Limited++
	}
	if i := strings.IndexByte(text, '#'); i >= 0 {
		text = text[:i] // RFC 9309 2.2.3: "#" starts a comment.
	}
	text = trimWS(text)
	if text == "" {
		return
	}
	k, key, value := splitRecord(text)
	switch k {
	case keyUserAgent:
		p.userAgent(value, n)
	case keyAllow, keyDisallow:
		p.rule(k == keyAllow, text, value, n)
	case keySitemap:
		p.r.Sitemaps = append(p.r.Sitemaps, value)
	case keyOther:
		p.r.Records = append(p.r.Records, Record{Key: key, Value: value, Line: n, Group: p.cur})
	default:
		p.r.Ignored++
	}
}

// userAgent handles a user-agent line (RFC 9309 2.2.1): it starts a new
// group unless it directly follows another user-agent line.
func (p *parser) userAgent(value string, n int) {
	if !p.inAgents {
		p.r.Groups = append(p.r.Groups, Group{Line: n})
		p.cur = len(p.r.Groups) - 1
		p.inAgents = true
	}
	g := &p.r.Groups[p.cur]
	g.Agents = append(g.Agents, productToken(value))
}

// rule handles an allow or disallow line (RFC 9309 2.2.2). Rules outside
// any group are ignored.
func (p *parser) rule(allow bool, text, value string, n int) {
	if p.cur < 0 {
		p.r.Ignored++
		return
	}
	p.inAgents = false
	g := &p.r.Groups[p.cur]
	if len(g.Rules) >= p.opts.MaxRulesPerGroup {
		p.r.Limited++
		return
	}
	pat := normalizePattern(value)
	r := &Rule{Allow: allow, Pattern: pat, Text: text, Line: n, pat: compilePattern(pat)}
	g.Rules = append(g.Rules, r)
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

// buildIndex merges, for each product token, every group that names it
// (RFC 9309 2.2.1), and sorts the merged rules for first-match lookup.
func buildIndex(groups []Group) map[string]*ruleSet {
	idx := make(map[string]*ruleSet)
	for gi := range groups {
		g := &groups[gi]
		for _, a := range g.Agents {
			if a == "" {
				continue
			}
			key := strings.ToLower(a)
			rs := idx[key]
			if rs == nil {
				rs = &ruleSet{agent: key}
				idx[key] = rs
			}
			if n := len(rs.groups); n > 0 && rs.groups[n-1] == gi {
				continue // the same token twice in one group
			}
			rs.groups = append(rs.groups, gi)
			for _, r := range g.Rules {
				if r.Pattern != "" { // an empty pattern matches nothing
					rs.rules = append(rs.rules, r)
				}
			}
		}
	}
	for _, rs := range idx {
		sortRules(rs.rules)
	}
	return idx
}
