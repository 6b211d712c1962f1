package robots

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// textSniffBytes is how much of a body NotText looks at: enough to judge
// any real file, bounded however large the body is.
const textSniffBytes = 64 << 10

// magics are the leading octets of the binary formats a robots.txt URL
// or file is most often found to hold by mistake: compressed data (a
// server that sends gzip without Content-Encoding, a compressed copy
// saved under the plain name) and images or documents served in its
// place.
var magics = []struct {
	prefix string
	what   string
}{
	{"\x1f\x8b", "gzip-compressed data"},
	{"BZh", "bzip2-compressed data"},
	{"\xfd7zXZ\x00", "xz-compressed data"},
	{"\x28\xb5\x2f\xfd", "zstd-compressed data"},
	{"PK\x03\x04", "a zip archive"},
	{"7z\xbc\xaf\x27\x1c", "a 7-zip archive"},
	{"\x89PNG\r\n\x1a\n", "a PNG image"},
	{"GIF87a", "a GIF image"},
	{"GIF89a", "a GIF image"},
	{"\xff\xd8\xff", "a JPEG image"},
	{"%PDF-", "a PDF document"},
	{"\xff\xfe", "UTF-16 text (little-endian), not UTF-8"},
	{"\xfe\xff", "UTF-16 text (big-endian), not UTF-8"},
}

// NotText says why body is not a text file, or "" when it is one. RFC
// 9309 2.3 has robots.txt be UTF-8 text; a body that is not text yields
// no group (or stray ones), so a crawler reading it is told nothing, and
// a decision made from it is worth a warning. Its first 64 KiB are
// judged, in this order:
//
//   - a magic number of a compressed, archive, image or PDF format, or a
//     UTF-16 byte order mark: "gzip-compressed data", "a PNG image", ...;
//   - a NUL octet, which no text encoding but UTF-16 and UTF-32 has:
//     "binary data (NUL octets)";
//   - mostly invalid UTF-8: more than half its octets are control
//     characters (other than tab, line feed, vertical tab, form feed and
//     carriage return) or octets of invalid UTF-8 sequences. A file in a
//     legacy charset (windows-1251, ISO-8859-2) is text: its directives
//     and paths are ASCII, and its non-ASCII octets are far fewer.
//
// An empty body is text (an empty robots.txt allows everything, as RFC
// 9309 2.2 reads it).
func NotText(body []byte) string {
	if len(body) > textSniffBytes {
		body = body[:textSniffBytes]
	}
	for _, m := range magics {
		if bytes.HasPrefix(body, []byte(m.prefix)) {
			return m.what
		}
	}
	if bytes.IndexByte(body, 0) >= 0 {
		return "binary data (NUL octets)"
	}
	bad := 0
	for i := 0; i < len(body); {
		c := body[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' || c == 0x7f {
				bad++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	if bad*2 > len(body) {
		return fmt.Sprintf("mostly invalid UTF-8 (%d of its first %d octets)", bad, len(body))
	}
	return ""
}
