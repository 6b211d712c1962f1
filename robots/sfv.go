package robots

import "unicode/utf8"

// This file validates RFC 9651 (Structured Field Values) Dictionaries, the
// serialization of statements of preference (draft-ietf-aipref-vocab-07
// section 6), without allocating: sfDict walks a dictionary once and hands
// each member's key and value, as spans of the input, to a callback.
//
// Every step follows the parsing algorithms of RFC 9651 section 4.2; the
// comments name the subsection. Parsing is over octets: an octet outside
// ASCII fails it (4.2, step 1).

// sfMember is one member of a dictionary as sfDict found it: its key and,
// when its value is a bare Token (4.2.6), the token.
type sfMember struct {
	key   string
	token string
	// isToken is true when the member's value is a Token; false for every
	// other bare item type, for an Inner List and for a member without "="
	// (Boolean true, 4.2.2 step 2.3).
	isToken bool
}

// sfDict parses s as an RFC 9651 Dictionary (4.2 with field_type
// "dictionary", 4.2.2) and calls f for each member in order; a key that
// appears again overrides the earlier member (4.2.2 step 2.4), which the
// caller handles by keeping the last. It reports whether s parsed; when it
// did not, f may have been called for the members before the failure.
func sfDict(s string, f func(m sfMember)) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false // 4.2 step 1: not ASCII
		}
	}
	p := sfParser{s: s}
	p.skipSP() // 4.2 step 2
	for !p.done() {
		var m sfMember
		var ok bool
		if m.key, ok = p.key(); !ok {
			return false
		}
		if p.peek() == '=' {
			p.i++
			if m.token, m.isToken, ok = p.itemOrInnerList(); !ok {
				return false
			}
		} else if !p.params() {
			return false
		}
		if f != nil {
			f(m)
		}
		p.skipOWS()
		if p.done() {
			return true
		}
		if p.s[p.i] != ',' {
			return false
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return false // a trailing comma
		}
	}
	return true // empty: no members
}

// sfParser is the input of sfDict and its position.
type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

// peek returns the next octet, or 0 at the end.
func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for p.peek() == ' ' {
		p.i++
	}
}

// skipOWS skips optional white space, SP and HTAB (RFC 9110 5.6.3).
func (p *sfParser) skipOWS() {
	for c := p.peek(); c == ' ' || c == '\t'; c = p.peek() {
		p.i++
	}
}

func isLcAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool   { return isLcAlpha(c) || 'A' <= c && c <= 'Z' }

// isSFKeyChar reports whether c may follow the first octet of a key: lcalpha,
// DIGIT, "_", "-", "." or "*" (4.2.3.3).
func isSFKeyChar(c byte) bool {
	return isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'
}

// key parses a Key (4.2.3.3).
func (p *sfParser) key() (string, bool) {
	start := p.i
	if c := p.peek(); !isLcAlpha(c) && c != '*' {
		return "", false
	}
	for p.i++; !p.done() && isSFKeyChar(p.s[p.i]); p.i++ {
	}
	return p.s[start:p.i], true
}

// IsUsageLabel reports whether label can be a key of an RFC 9651
// Dictionary, and so a usage category label of draft-ietf-aipref-vocab-07
// (section 6.1): a lower-case letter or "*", then lower-case letters,
// digits, "_", "-", "." and "*". Labels are case-sensitive.
func IsUsageLabel(label string) bool {
	p := sfParser{s: label}
	_, ok := p.key()
	return ok && p.done()
}

// itemOrInnerList parses an Item or Inner List (4.2.1.1); it returns the
// token when the value is a bare Token.
func (p *sfParser) itemOrInnerList() (token string, isToken, ok bool) {
	if p.peek() == '(' {
		return "", false, p.innerList()
	}
	return p.item()
}

// innerList parses an Inner List (4.2.1.2).
func (p *sfParser) innerList() bool {
	p.i++ // "("
	for !p.done() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return p.params()
		}
		if _, _, ok := p.item(); !ok {
			return false
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return false
		}
	}
	return false // no ")"
}

// item parses an Item (4.2.3): a bare item and its parameters.
func (p *sfParser) item() (token string, isToken, ok bool) {
	start := p.i
	isToken, ok = p.bareItem()
	if !ok {
		return "", false, false
	}
	token = p.s[start:p.i]
	return token, isToken, p.params()
}

// params parses Parameters (4.2.3.2); their values are validated and
// otherwise ignored (draft-ietf-aipref-vocab-07 6.4: unknown parameters
// MUST be ignored).
func (p *sfParser) params() bool {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, ok := p.key(); !ok {
			return false
		}
		if p.peek() == '=' {
			p.i++
			if _, ok := p.bareItem(); !ok {
				return false
			}
		}
	}
	return true
}

// bareItem parses a Bare Item (4.2.3.1) and reports whether it is a Token.
func (p *sfParser) bareItem() (isToken, ok bool) {
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		_, ok = p.number()
	case c == '"':
		ok = p.str()
	case isAlpha(c) || c == '*':
		p.token()
		return true, true
	case c == ':':
		ok = p.bytes()
	case c == '?':
		ok = p.boolean()
	case c == '@':
		p.i++
		var decimal bool
		decimal, ok = p.number() // 4.2.9: a Date is an Integer
		ok = ok && !decimal
	case c == '%':
		ok = p.displayString()
	}
	return false, ok
}

// number parses an Integer or Decimal (4.2.4) and reports whether it is a
// Decimal.
func (p *sfParser) number() (decimal, ok bool) {
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		return false, false
	}
	n, frac := 0, -1 // octets of input_number; digits after "."
	for ; !p.done(); p.i++ {
		c := p.s[p.i]
		switch {
		case isDigit(c):
			n++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			if n > 12 {
				return false, false
			}
			n++
			frac = 0
		default:
			return numberEnd(frac)
		}
		if frac < 0 && n > 15 || frac >= 0 && n > 16 {
			return false, false
		}
	}
	return numberEnd(frac)
}

// numberEnd checks the end of a number with frac digits after its ".", -1
// for an Integer (4.2.4 step 9).
func numberEnd(frac int) (decimal, ok bool) {
	if frac < 0 {
		return false, true
	}
	return true, frac >= 1 && frac <= 3
}

// str parses a String (4.2.5).
func (p *sfParser) str() bool {
	for p.i++; !p.done(); {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.done() {
				return false
			}
			if n := p.s[p.i]; n != '"' && n != '\\' {
				return false
			}
			p.i++
		case c == '"':
			return true
		case c < 0x20 || c >= 0x7F:
			return false
		}
	}
	return false
}

// token parses a Token (4.2.6); the first octet is ALPHA or "*".
func (p *sfParser) token() {
	for p.i++; !p.done(); p.i++ {
		if c := p.s[p.i]; !IsTokenChar(c) && c != ':' && c != '/' {
			return
		}
	}
}

// bytes parses a Byte Sequence (4.2.7). Missing "=" padding and non-zero
// pad bits are accepted, as the RFC says parsers SHOULD.
func (p *sfParser) bytes() bool {
	p.i++ // ":"
	start := p.i
	for ; !p.done() && p.s[p.i] != ':'; p.i++ {
	}
	if p.done() {
		return false
	}
	b64 := p.s[start:p.i]
	p.i++
	return validBase64(b64)
}

// validBase64 reports whether s is base64 (RFC 4648 section 4) that a
// decoder accepting missing padding decodes: the alphabet, at most two "="
// only at the end, and no single octet left over.
func validBase64(s string) bool {
	pad := 0
	for pad < 2 && pad < len(s) && s[len(s)-1-pad] == '=' {
		pad++
	}
	body := s[:len(s)-pad]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' {
			return false
		}
	}
	if len(body)%4 == 1 {
		return false
	}
	return pad == 0 || len(s)%4 == 0 && (len(body)%4+pad == 4)
}

// boolean parses a Boolean (4.2.8).
func (p *sfParser) boolean() bool {
	p.i++ // "?"
	if c := p.peek(); c == '0' || c == '1' {
		p.i++
		return true
	}
	return false
}

// displayString parses a Display String (4.2.10): "%" DQUOTE, printable
// ASCII and lower-case %xx escapes whose octets are UTF-8, DQUOTE.
func (p *sfParser) displayString() bool {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' {
		return false
	}
	var pend [utf8.UTFMax]byte // the octets of an incomplete UTF-8 sequence
	n := 0
	for p.i += 2; !p.done(); {
		c := p.s[p.i]
		p.i++
		switch {
		case c < 0x20 || c >= 0x7F:
			return false
		case c == '"':
			return n == 0
		case c == '%':
			if p.i+2 > len(p.s) {
				return false
			}
			hi, ok1 := lowerHexVal(p.s[p.i])
			lo, ok2 := lowerHexVal(p.s[p.i+1])
			if !ok1 || !ok2 {
				return false
			}
			p.i += 2
			c = hi<<4 | lo
		}
		if n == 0 && c < utf8.RuneSelf {
			continue
		}
		pend[n] = c
		n++
		if utf8.FullRune(pend[:n]) {
			if r, size := utf8.DecodeRune(pend[:n]); r == utf8.RuneError && size <= 1 || size != n {
				return false
			}
			n = 0
		}
	}
	return false
}

// lowerHexVal decodes a digit or lower-case hexadecimal letter.
func lowerHexVal(c byte) (byte, bool) {
	switch {
	case isDigit(c):
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
