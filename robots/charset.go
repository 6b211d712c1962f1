package robots

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// bridgeEncoding bridges a robots.txt body that is not UTF-8 (RFC 9309
// 2.2.2, last paragraph: implementors MAY bridge encoding mismatches; 2.3
// requires UTF-8). A body that is valid UTF-8 is returned unchanged, and so
// is every line of it that is valid UTF-8. Each other line is transcoded to
// UTF-8 from charset, the charset the server declared (a WHATWG label such
// as "windows-1251" or "shift_jis"), or from windows-1252 (the WHATWG
// reading of ISO-8859-1, the commonest legacy encoding of real robots.txt
// files) when charset is empty, unknown, UTF-8 or cannot decode the line.
// Line terminators are kept, so line numbers do not change. The result is
// a new slice when anything was transcoded, else body itself.
func bridgeEncoding(body []byte, charset string) []byte {
	if utf8.Valid(body) {
		return body
	}
	dec := legacyEncoding(charset)
	out := make([]byte, 0, len(body)+len(body)/2)
	for rest := body; len(rest) > 0; {
		n := bytes.IndexAny(rest, "\r\n")
		if n < 0 {
			n = len(rest)
		}
		out = appendUTF8(out, rest[:n], dec)
		rest = rest[n:]
		if len(rest) > 0 { // one terminator octet; "\r\n" takes two turns
			out, rest = append(out, rest[0]), rest[1:]
		}
	}
	return out
}

// legacyEncoding returns the encoding named by a declared charset, or
// windows-1252 when there is none that helps.
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

// appendUTF8 appends line, transcoded from enc unless it is valid UTF-8.
func appendUTF8(out, line []byte, enc encoding.Encoding) []byte {
	if utf8.Valid(line) {
		return append(out, line...)
	}
	if s, err := enc.NewDecoder().Bytes(line); err == nil && utf8.Valid(s) {
		return append(out, s...)
	}
	s, _ := charmap.Windows1252.NewDecoder().Bytes(line) // maps every octet
	return append(out, s...)
}
