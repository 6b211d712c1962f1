package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// Entry is one request read from an access log. Its byte slices point
// into the line being read and are valid until the next line is read.
type Entry struct {
	// Time is when the request was logged.
	Time time.Time
	// Client is the client address as logged (an IP address, or a host
	// name when the server resolved it).
	Client []byte
	// Method is the request method, "" when the log has none.
	Method []byte
	// Target is the request target as sent: a path and query, or an
	// absolute URL.
	Target []byte
	// Status is the response status, 0 when not logged.
	Status int
	// UserAgent is the User-Agent header, unescaped; empty for "-".
	UserAgent []byte
}

// Parser reads one access log line into an Entry. An error means the
// line is malformed; it is counted and skipped, never fatal.
type Parser interface {
	Parse(line []byte, e *Entry) error
}

var errMalformed = errors.New("malformed line")

// Combined parses the Combined Log Format, the default of nginx
// ("combined") and Apache ("%h %l %u %t \"%r\" %>s %b \"%{Referer}i\"
// \"%{User-agent}i\""), and the Common Log Format (no referer and
// User-Agent):
//
//	203.0.113.7 - - [20/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 512 "-" "ExampleBot/1.0"
//
// Quoted fields may hold escapes: \" and \\ (Apache) and \xHH (nginx and
// Apache); the User-Agent is unescaped into scratch space it owns. A
// Combined is not safe for concurrent use.
type Combined struct {
	ua []byte
}

// Parse implements Parser.
func (c *Combined) Parse(line []byte, e *Entry) error {
	*e = Entry{}
	line = bytes.TrimRight(line, "\r\n")
	i := bytes.IndexByte(line, ' ')
	if i <= 0 {
		return fmt.Errorf("%w: no client address", errMalformed)
	}
	e.Client = line[:i]
	open := bytes.IndexByte(line[i:], '[')
	if open < 0 {
		return fmt.Errorf("%w: no [time]", errMalformed)
	}
	open += i
	end := bytes.IndexByte(line[open:], ']')
	if end < 0 {
		return fmt.Errorf("%w: no [time]", errMalformed)
	}
	end += open
	t, err := parseCLFTime(line[open+1 : end])
	if err != nil {
		return err
	}
	e.Time = t
	rest := line[end+1:]
	req, rest, ok := quoted(rest)
	if !ok {
		return fmt.Errorf("%w: no quoted request line", errMalformed)
	}
	if err := splitRequest(req, e); err != nil {
		return err
	}
	rest = bytes.TrimLeft(rest, " ")
	if j := bytes.IndexByte(rest, ' '); j > 0 {
		e.Status = atoi(rest[:j])
		rest = rest[j:]
	} else {
		e.Status = atoi(rest)
		return nil // Common Log Format: no referer and User-Agent
	}
	if j := bytes.IndexByte(rest, '"'); j < 0 {
		return nil // Common Log Format
	} else {
		rest = rest[j:]
	}
	if _, rest, ok = quoted(rest); !ok { // referer
		return fmt.Errorf("%w: unterminated referer", errMalformed)
	}
	ua, _, ok := quoted(rest)
	if !ok {
		return fmt.Errorf("%w: unterminated User-Agent", errMalformed)
	}
	if len(ua) == 1 && ua[0] == '-' {
		return nil
	}
	if bytes.IndexByte(ua, '\\') >= 0 {
		c.ua = unescape(c.ua[:0], ua)
		ua = c.ua
	}
	e.UserAgent = ua
	return nil
}

// splitRequest reads "METHOD TARGET PROTOCOL" (or "METHOD TARGET", an
// HTTP/0.9 request line); "-" and anything else is malformed.
func splitRequest(req []byte, e *Entry) error {
	sp := bytes.IndexByte(req, ' ')
	if sp <= 0 {
		return fmt.Errorf("%w: request line %q", errMalformed, clip(req))
	}
	e.Method = req[:sp]
	target := req[sp+1:]
	if sp2 := bytes.LastIndexByte(target, ' '); sp2 >= 0 && bytes.HasPrefix(target[sp2+1:], []byte("HTTP/")) {
		target = target[:sp2]
	}
	e.Target = target
	return checkTarget(target)
}

// checkTarget accepts an origin-form ("/a?b") or absolute http(s) target.
func checkTarget(target []byte) error {
	if len(target) == 0 || target[0] != '/' && !bytes.HasPrefix(target, []byte("http://")) && !bytes.HasPrefix(target, []byte("https://")) {
		return fmt.Errorf("%w: request target %q", errMalformed, clip(target))
	}
	return nil
}

// clip shortens a field quoted in an error message.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// quoted returns the quoted string that starts s (after spaces), without
// its quotes and still escaped, and what follows it.
func quoted(s []byte) (field, rest []byte, ok bool) {
	s = bytes.TrimLeft(s, " ")
	if len(s) == 0 || s[0] != '"' {
		return nil, s, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[1:i], s[i+1:], true
		}
	}
	return nil, s, false
}

// unescape appends s to dst with \" \\ and \xHH escapes decoded.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			dst = append(dst, s[i])
			continue
		}
		switch n := s[i+1]; {
		case n == 'x' && i+3 < len(s) && isHex(s[i+2]) && isHex(s[i+3]):
			dst = append(dst, unhex(s[i+2])<<4|unhex(s[i+3]))
			i += 3
		default:
			dst = append(dst, n)
			i++
		}
	}
	return dst
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// atoi reads a non-negative decimal, 0 for anything else ("-").
func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1e8 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseCLFTime reads "20/Nov/2026:10:00:00 +0000" (strftime "%d/%b/%Y:%H:%M:%S %z").
func parseCLFTime(b []byte) (time.Time, error) {
	if len(b) != 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return time.Time{}, fmt.Errorf("%w: time %q: want 20/Nov/2026:10:00:00 +0000", errMalformed, clip(b))
	}
	mon := -1
	for i, m := range months {
		if string(b[3:6]) == m {
			mon = i + 1
		}
	}
	day, year := num(b[0:2]), num(b[7:11])
	hh, mm, ss := num(b[12:14]), num(b[15:17]), num(b[18:20])
	sign, oh, om := b[21], num(b[22:24]), num(b[24:26])
	if mon < 0 || day < 1 || day > 31 || year < 0 || hh < 0 || mm < 0 || ss < 0 || hh > 23 || mm > 59 || ss > 60 || oh < 0 || om < 0 || oh > 23 || om > 59 || (sign != '+' && sign != '-') {
		return time.Time{}, fmt.Errorf("%w: time %q", errMalformed, clip(b))
	}
	off := (oh*60 + om) * 60
	if sign == '-' {
		off = -off
	}
	t := time.Date(year, time.Month(mon), day, hh, mm, ss, 0, time.UTC).Add(-time.Duration(off) * time.Second)
	return t, nil
}

// num reads fixed-width decimal digits, -1 when one is not a digit.
func num(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
