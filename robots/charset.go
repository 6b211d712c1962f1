package robots

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// Bridging (RFC 9309 2.2.2, last paragraph: implementors MAY bridge
// encoding mismatches; 2.3 requires UTF-8). In a body that is not valid
// UTF-8, each line that is not valid UTF-8 is read twice:
//
//   - bridged: transcoded to UTF-8 from the charset the server declared,
//     or from windows-1252 (see legacyEncoding), so that a Latin-1
//     "Disallow: /gr\xf6\xdfe" matches "/gr%C3%B6%C3%9Fe", the URL a
//     UTF-8 site serves;
//   - raw: its octets as sent, so that the same rule also matches
//     "/gr%F6%DFe", the URL a site that writes Latin-1 robots.txt may
//     serve, and the one Google's matcher compares with.
//
// A rule line whose two readings give different patterns becomes two rules
// with the same line and kind (see parser.rawTwin); the longest match among
// all rules decides as usual (2.2.2). Other lines (user-agent, sitemap,
// other records) are read bridged only. Lines that are valid UTF-8 are
// never changed.

// twinMark starts the edits of the raw twin of a bridged rule: an edit
// "delta 0, kind 0" that appendPattern never writes (its kinds start at 1).
// The value as bridged follows it, so that Rule.Text shows the line as the
// bridged rule does.
const twinMark = "\x01\x00"

// legacyEncoding returns the encoding named by a declared charset (a WHATWG
// label such as "windows-1251" or "shift_jis"), or windows-1252 (the WHATWG
// reading of ISO-8859-1, the commonest legacy encoding of real robots.txt
// files) when the charset is empty, unknown or UTF-8.
func legacyEncoding(charset string) encoding.Encoding {
	if charset != "" {
		if e, err := htmlindex.Get(charset); err == nil && e != encoding.Nop {
			if name, _ := htmlindex.Name(e); name != "utf-8" {
				return e
			}
		}
	}
	return charmap.Windows1252
}

// bridgeLine returns line transcoded to UTF-8 from enc, or from
// windows-1252 when enc cannot decode it, or line itself when it is valid
// UTF-8. The line holds no line terminator, and the result holds none.
func bridgeLine(line string, enc encoding.Encoding) string {
	if utf8.ValidString(line) {
		return line
	}
	if s, err := enc.NewDecoder().String(line); err == nil && utf8.ValidString(s) && !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s, _ := charmap.Windows1252.NewDecoder().String(line) // maps every octet, CR and LF to themselves
	return s
}

// rawTwin adds the raw reading of a bridged rule line whose bridged
// reading is the last rule added (see the bridging notes above): raw is
// the line as sent, bridged the rule's value as bridged, k its kind. The
// twin is added only when raw is a rule of the same kind with a non-empty
// value whose pattern differs from the bridged rule's; it shares the line.
func (p *parser) rawTwin(k keyKind, bridged, raw string) {
	text, _ := p.content(raw)
	rk, _, value := splitRecord(text)
	if rk != k || value == "" {
		return
	}
	b := p.rs[len(p.rs)-1]
	t := prule{flags: b.flags & fAllow, line: b.line, pat: len(p.pats), edits0: len(p.edits)}
	p.pats, p.edits = appendPattern(p.pats, p.edits, value)
	if string(p.pats[t.pat:]) == string(p.pats[b.pat:b.pat+b.n]) {
		p.pats, p.edits = p.pats[:t.pat], p.edits[:t.edits0]
		return
	}
	p.edits = append(append(p.edits[:t.edits0], twinMark...), bridged...)
	p.push(t)
}

// isTwin reports whether edits are those of a raw twin (see twinMark).
func isTwin(edits string) bool {
	return strings.HasPrefix(edits, twinMark)
}
