package server

import (
	"bytes"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// requestHead is what the first octets of a request tell about it.
type requestHead struct {
	method, target, userAgent string
	// protocol is the HTTP version of a complete request line, when it
	// is HTTP/1.0 or HTTP/1.1 (auditlog's Protocol values), else "".
	protocol string
	// targetCut: the request line did not end within the octets kept, so
	// target is only its start.
	targetCut bool
}

// parseHead recovers the method, the request target and the User-Agent
// header from the first octets of a request (RFC 9112 3: method SP
// request-target SP HTTP-version CRLF, then field lines), which may stop
// anywhere. Anything it cannot read with certainty is left "": the method
// must be a token followed by a space, and a field line must end within b;
// a request line that does not end within b gives the start of the target,
// marked targetCut. Hostile input yields "", never a panic.
func parseHead(b []byte) requestHead {
	// RFC 9112 2.2: a server SHOULD ignore at least one empty line before
	// the request line.
	b = bytes.TrimLeft(b, "\r\n")
	line, rest, complete := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	method, afterMethod, ok := bytes.Cut(line, []byte(" "))
	if !ok || !isToken(method) {
		return requestHead{}
	}
	h := requestHead{method: string(method)}
	target, version, ok := bytes.Cut(afterMethod, []byte(" "))
	switch {
	case ok:
		h.target = string(target)
		if v := string(version); complete && (v == auditlog.ProtocolHTTP10 || v == auditlog.ProtocolHTTP11) {
			h.protocol = v
		}
	case complete: // no HTTP-version: the rest of the line
		h.target = string(afterMethod)
	default:
		h.target, h.targetCut = string(afterMethod), true
	}
	if complete {
		h.userAgent = fieldValue(rest, "User-Agent")
	}
	return h
}

// fieldValue returns the value of the first field line named name in the
// field lines b, "" when there is none or it does not end within b.
func fieldValue(b []byte, name string) string {
	for len(b) > 0 {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		if !complete {
			return ""
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			return "" // end of the header section
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte(name)) {
			return string(bytes.Trim(v, " \t"))
		}
		b = rest
	}
	return ""
}

// isToken reports whether b is a non-empty RFC 9110 5.6.2 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}

// headerEnd returns the offset just past the empty line that ends the
// header section in b (CRLF CRLF, or bare LFs, which Go's server accepts),
// or -1 when b holds no such line. Empty lines before the request line do
// not count.
func headerEnd(b []byte) int {
	for i := len(b) - len(bytes.TrimLeft(b, "\r\n")); i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		switch {
		case i+1 < len(b) && b[i+1] == '\n':
			return i + 2
		case i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n':
			return i + 3
		}
	}
	return -1
}
