package auditlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Why a line was rejected. Every error of a Scanner is one of these.
var (
	// ErrSyntax: the line is not one JSON object (RFC 8259).
	ErrSyntax = errors.New("not a JSON object")
	// ErrTruncated: the line ends inside the object.
	ErrTruncated = errors.New("truncated line")
	// ErrType: a field read has the wrong type (a string where a number
	// is wanted, 1.5 where an integer is, an integer out of range, a list
	// entry that is not a string).
	ErrType = errors.New("a field has the wrong type")
	// ErrTooDeep: values are nested deeper than MaxDepth.
	ErrTooDeep = errors.New("values nested too deep")
	// ErrTooLong: the line is longer than MaxLineBytes.
	ErrTooLong = errors.New("line too long")
)

// MaxDepth is the deepest nesting of objects and arrays a line may have,
// its own object included: encoding/json's limit, so that the Scanner
// accepts exactly the lines encoding/json accepts (a proxy line nests two
// deep).
const MaxDepth = 10000

// Scanner reads one audit line, a JSON object, member by member, without
// decoding the members it is not asked for. It accepts a line exactly when
// encoding/json would (skipped values are validated in full), and what it
// yields for a member is what encoding/json yields for it:
//
//   - The line is read as encoding/json reads it into a
//     map[string]json.RawMessage: keys match exactly (no case folding),
//     and when a key repeats the last member is the one that counts. Next
//     yields every member in order, so a reader that keeps the last value
//     of each key gets that.
//   - Strings are unescaped as encoding/json unescapes them: invalid UTF-8
//     and lone surrogates become U+FFFD.
//   - null is the zero value: Null reports it; Str, Bool, Int and Strs
//     reject it (ErrType), as they reject any other wrong type.
//
// A line over MaxLineBytes is rejected (ErrTooLong) without being read.
// The zero value is ready to use; Reset starts a line. A Scanner never
// panics on input and, once warm, allocates nothing: the []byte values it
// returns alias the line or the Scanner's own buffer, and are valid until
// the next Reset.
type Scanner struct {
	b     []byte
	i     int // where reading goes on
	state uint8
	err   error
	key   []byte
	arena []byte // unescaped strings of the current line
	// The containers open in a skipped value, a bit each (1: object):
	// the first 64 in shallow, deeper ones in deep, made only for a value
	// nested that deep.
	shallow uint64
	deep    []uint64
}

// Scanner states.
const (
	stBegin uint8 = iota // before the opening brace
	stValue              // a member's value is next, unread
	stAfter              // after a member's value
	stDone               // the line was read to its end, or rejected
)

// Reset starts reading line (without its newline).
func (s *Scanner) Reset(line []byte) {
	s.b, s.i, s.state, s.err, s.key, s.arena = line, 0, stBegin, nil, nil, s.arena[:0]
}

// Next moves to the line's next member, skipping the current member's
// value if it was not read, and reports whether there is one: false at the
// end of the object or on an error (see Err).
func (s *Scanner) Next() bool {
	b := s.b
	switch s.state {
	case stDone:
		return false
	case stBegin:
		if len(b) > MaxLineBytes {
			return s.fail(ErrTooLong)
		}
		i := skipWS(b, 0)
		if i >= len(b) || b[i] != '{' {
			return s.fail(ErrSyntax)
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return s.end(i + 1)
		}
		s.i = i
	case stValue:
		j, err := s.skip(s.i)
		if err != nil {
			return s.fail(err)
		}
		s.i = j
		fallthrough
	case stAfter:
		i := skipWS(b, s.i)
		switch {
		case i >= len(b):
			return s.fail(ErrTruncated)
		case b[i] == '}':
			return s.end(i + 1)
		case b[i] != ',':
			return s.fail(ErrSyntax)
		}
		s.i = skipWS(b, i+1)
	}
	key, j, err := s.str(s.i)
	if err != nil {
		return s.fail(err)
	}
	j = skipWS(b, j)
	if j < len(b) && b[j] != ':' {
		return s.fail(ErrSyntax)
	}
	j = skipWS(b, j+1)
	if j >= len(b) {
		return s.fail(ErrTruncated)
	}
	s.key, s.i, s.state = key, j, stValue
	return true
}

// end checks that only white space follows the object's closing brace.
func (s *Scanner) end(i int) bool {
	if skipWS(s.b, i) != len(s.b) {
		return s.fail(ErrSyntax)
	}
	s.state = stDone
	return false
}

func (s *Scanner) fail(err error) bool {
	s.err, s.state = err, stDone
	return false
}

// Err returns why the line was rejected, nil if it was read to its end
// (Next returned false with no error). Call it after Next returns false.
func (s *Scanner) Err() error { return s.err }

// Key returns the current member's key, unescaped.
func (s *Scanner) Key() []byte { return s.key }

// value starts reading the current member's value: its first octet's
// index, or false (and an error) if there is none to read.
func (s *Scanner) value() (int, bool) {
	if s.state != stValue {
		if s.err == nil {
			s.fail(ErrType) // a value read twice, or outside a member
		}
		return 0, false
	}
	return s.i, true
}

// typeErr rejects the line for the value at i, which is not of the type
// asked for: with the value's own error if it is not valid either (so that
// a line cut inside it is ErrTruncated), else ErrType.
func (s *Scanner) typeErr(i int) error {
	if _, err := s.skip(i); err != nil {
		s.fail(err)
		return err
	}
	s.fail(ErrType)
	return ErrType
}

// Null reports whether the current member's value is null, and if so
// reads it.
func (s *Scanner) Null() bool {
	i, ok := s.value()
	if !ok || !hasPrefix(s.b[i:], "null") {
		return false
	}
	s.i, s.state = i+4, stAfter
	return true
}

// Str reads the current member's value, a string, unescaped.
func (s *Scanner) Str() ([]byte, error) {
	i, ok := s.value()
	if !ok {
		return nil, s.err
	}
	if s.b[i] != '"' {
		return nil, s.typeErr(i)
	}
	v, j, err := s.str(i)
	if err != nil {
		s.fail(err)
		return nil, err
	}
	s.i, s.state = j, stAfter
	return v, nil
}

// Bool reads the current member's value, true or false.
func (s *Scanner) Bool() (bool, error) {
	i, ok := s.value()
	if !ok {
		return false, s.err
	}
	switch {
	case hasPrefix(s.b[i:], "true"):
		s.i, s.state = i+4, stAfter
		return true, nil
	case hasPrefix(s.b[i:], "false"):
		s.i, s.state = i+5, stAfter
		return false, nil
	}
	return false, s.typeErr(i)
}

// Int reads the current member's value, an integer that fits in an int64
// (what encoding/json decodes into an int on a 64-bit platform).
func (s *Scanner) Int() (int64, error) {
	i, ok := s.value()
	if !ok {
		return 0, s.err
	}
	b := s.b
	if c := b[i]; c != '-' && (c < '0' || c > '9') {
		return 0, s.typeErr(i)
	}
	j, err := number(b, i)
	if err != nil {
		s.fail(err)
		return 0, err
	}
	n, perr := strconv.ParseInt(unsafeString(b[i:j]), 10, 64) // rejects fractions and exponents
	if perr != nil {
		s.fail(ErrType)
		return 0, ErrType
	}
	s.i, s.state = j, stAfter
	return n, nil
}

// Strs reads the current member's value, an array of strings, appending
// its entries to dst[:0].
func (s *Scanner) Strs(dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	i, ok := s.value()
	if !ok {
		return dst, s.err
	}
	b := s.b
	if b[i] != '[' {
		return dst, s.typeErr(i)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		s.i, s.state = i+1, stAfter
		return dst, nil
	}
	for {
		if i < len(b) && b[i] != '"' {
			return dst, s.typeErr(i)
		}
		v, j, err := s.str(i)
		if err != nil {
			s.fail(err)
			return dst, err
		}
		dst = append(dst, v)
		i = skipWS(b, j)
		switch {
		case i >= len(b):
			s.fail(ErrTruncated)
			return dst, ErrTruncated
		case b[i] == ']':
			s.i, s.state = i+1, stAfter
			return dst, nil
		case b[i] != ',':
			s.fail(ErrSyntax)
			return dst, ErrSyntax
		}
		i = skipWS(b, i+1)
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain reports whether none of the 8 octets of w needs a closer look in
// a string: a control character, '"', '\\' or a non-ASCII octet.
func plain(w uint64) bool {
	q, bs := w^(lsb*'"'), w^(lsb*'\\')
	return ((w-lsb*0x20)&^w|(q-lsb)&^q|(bs-lsb)&^bs|w)&msb == 0
}

// str reads the string at b[i] and returns its value and the index after
// it. A string of printable ASCII without escapes is returned in place;
// others are checked, and decoded into s.arena when they have escapes or
// invalid UTF-8.
func (s *Scanner) str(i int) ([]byte, int, error) {
	b := s.b
	if i >= len(b) {
		return nil, 0, ErrTruncated
	}
	if b[i] != '"' {
		return nil, 0, ErrSyntax
	}
	// Short strings (keys, most values) octet by octet; longer ones
	// with IndexByte, which is vectorised.
	j := i + 1
	for end := min(j+16, len(b)); j < end; j++ {
		c := b[j]
		if c == '"' {
			return b[i+1 : j], j + 1, nil
		}
		if !plainOctet[c] {
			return s.strSlow(i, j)
		}
	}
	if q := bytes.IndexByte(b[j:], '"'); q >= 0 && printable(b[j:j+q]) {
		return b[i+1 : j+q], j + q + 1, nil
	}
	return s.strSlow(i, j)
}

// plainOctet tells the octets a string holds as they are: printable ASCII
// but '"' and '\\' (and '"' is tested first).
var plainOctet = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '\\'
	}
	return t
}()

// printable reports whether b is all printable ASCII without '\\'.
func printable(b []byte) bool {
	j := 0
	for ; j+8 <= len(b); j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		bs := w ^ (lsb * '\\')
		if ((w-lsb*0x20)&^w|(bs-lsb)&^bs|w)&msb != 0 {
			return false
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// strSlow finishes reading the string at b[i] from b[j] on, the first
// octet that is not printable ASCII.
func (s *Scanner) strSlow(i, j int) ([]byte, int, error) {
	k, esc, err := strEnd(s.b, j)
	if err != nil {
		return nil, 0, err
	}
	raw := s.b[i+1 : k-1]
	if !esc && utf8.Valid(raw) {
		return raw, k, nil
	}
	start := len(s.arena)
	s.arena = unquote(s.arena, raw)
	return s.arena[start:len(s.arena):len(s.arena)], k, nil
}

// strSkip checks the string whose content starts at b[j] and returns the
// index after its closing quote.
func strSkip(b []byte, j int) (int, error) {
	if q := bytes.IndexByte(b[j:], '"'); q >= 0 && printable(b[j:j+q]) {
		return j + q + 1, nil
	}
	k, _, err := strEnd(b, j)
	return k, err
}

// strEnd checks the rest of a string from b[j] on and returns the index
// after its closing quote and whether it has escapes (RFC 8259 section 7:
// no control characters; escapes \" \\ \/ \b \f \n \r \t \uXXXX).
func strEnd(b []byte, j int) (int, bool, error) {
	esc := false
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, nil
		case c < 0x20:
			return 0, false, ErrSyntax
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return 0, false, ErrTruncated
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for n := 0; n < 4; n++ {
					j++
					if j >= len(b) {
						return 0, false, ErrTruncated
					}
					if !isHex(b[j]) {
						return 0, false, ErrSyntax
					}
				}
			default:
				return 0, false, ErrSyntax
			}
		}
	}
	return 0, false, ErrTruncated
}

// unquote appends the value of raw, the valid content of a JSON string, to
// dst, decoded as encoding/json decodes it: a valid surrogate pair is one
// rune; a lone surrogate and each octet of invalid UTF-8 is U+FFFD.
func unquote(dst, raw []byte) []byte {
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			r++
			switch e := raw[r]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(raw[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(raw) && raw[r] == '\\' && raw[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(raw[r+2:])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			r++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// hex4 reads four hex digits (checked by strEnd).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skip checks the value at b[i] and returns the index after it. Objects
// and arrays are followed with a stack of bits (1: object), not by
// recursion.
func (s *Scanner) skip(i int) (int, error) {
	b := s.b
	depth := 0 // containers open inside the member's value
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, ErrTruncated
		}
		switch c := b[i]; {
		case c == '"':
			j, err := strSkip(b, i+1)
			if err != nil {
				return 0, err
			}
			i = j
		case c == '{' || c == '[':
			if depth+1 >= MaxDepth { // the line's own object is one more
				return 0, ErrTooDeep
			}
			s.push(depth, c == '{')
			depth++
			i = skipWS(b, i+1)
			if i >= len(b) {
				return 0, ErrTruncated
			}
			if b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				i++
				depth--
				break
			}
			if c == '{' {
				var err error
				if i, err = s.memberKey(i); err != nil {
					return 0, err
				}
			}
			continue
		case c == '-' || c >= '0' && c <= '9':
			j, err := number(b, i)
			if err != nil {
				return 0, err
			}
			i = j
		case c == 't':
			if err := literal(b, i, "true"); err != nil {
				return 0, err
			}
			i += 4
		case c == 'f':
			if err := literal(b, i, "false"); err != nil {
				return 0, err
			}
			i += 5
		case c == 'n':
			if err := literal(b, i, "null"); err != nil {
				return 0, err
			}
			i += 4
		default:
			return 0, ErrSyntax
		}
		// A value ended before b[i]: close containers, or go on to the
		// next entry.
		for {
			if depth == 0 {
				return i, nil
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, ErrTruncated
			}
			obj := s.isObject(depth - 1)
			c := b[i]
			if obj && c == '}' || !obj && c == ']' {
				i++
				depth--
				continue
			}
			if c != ',' {
				return 0, ErrSyntax
			}
			i = skipWS(b, i+1)
			if obj {
				var err error
				if i, err = s.memberKey(i); err != nil {
					return 0, err
				}
			}
			break
		}
	}
}

// push records whether the container at depth d is an object.
func (s *Scanner) push(d int, obj bool) {
	w := &s.shallow
	if d >= 64 {
		if n := d/64 - 1; n >= len(s.deep) {
			s.deep = append(s.deep, 0)
			w = &s.deep[len(s.deep)-1]
		} else {
			w = &s.deep[n]
		}
	}
	bit := uint64(1) << (d % 64)
	if obj {
		*w |= bit
	} else {
		*w &^= bit
	}
}

// isObject reports whether the container at depth d is an object.
func (s *Scanner) isObject(d int) bool {
	w := s.shallow
	if d >= 64 {
		w = s.deep[d/64-1]
	}
	return w&(1<<(d%64)) != 0
}

// memberKey checks `"key" :` at b[i] and returns the index of the value
// after it.
func (s *Scanner) memberKey(i int) (int, error) {
	b := s.b
	if i >= len(b) {
		return 0, ErrTruncated
	}
	if b[i] != '"' {
		return 0, ErrSyntax
	}
	j, err := strSkip(b, i+1)
	if err != nil {
		return 0, err
	}
	j = skipWS(b, j)
	if j >= len(b) {
		return 0, ErrTruncated
	}
	if b[j] != ':' {
		return 0, ErrSyntax
	}
	return skipWS(b, j+1), nil
}

// number checks the number at b[i] (RFC 8259 section 6) and returns the
// index after it.
func number(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, ErrTruncated
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) {
			return 0, ErrTruncated
		}
		if b[i] < '0' || b[i] > '9' {
			return 0, ErrSyntax
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) {
			return 0, ErrTruncated
		}
		if b[i] < '0' || b[i] > '9' {
			return 0, ErrSyntax
		}
		i = digits(b, i)
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// literal checks that b[i:] starts with lit: ErrTruncated when b ends
// before lit does, ErrSyntax when it differs.
func literal(b []byte, i int, lit string) error {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return ErrTruncated
		}
		if b[i+k] != lit[k] {
			return ErrSyntax
		}
	}
	return nil
}

func hasPrefix(b []byte, lit string) bool {
	return len(b) >= len(lit) && string(b[:len(lit)]) == lit
}

// skipWS skips JSON white space (RFC 8259 section 2).
func skipWS(b []byte, i int) int {
	for i < len(b) && isWS[b[i]] {
		i++
	}
	return i
}

// isWS tells JSON's white space octets.
var isWS = [256]bool{' ': true, '\t': true, '\r': true, '\n': true}

// unsafeString views b as a string that is not kept.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
