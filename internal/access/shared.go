package access

import (
	"net/http"

	"github.com/robotsproxy/robotsproxy/robots"
)

// ParseBody compiles a robots.txt body exactly as Fetcher does for a 2xx
// response: body is Access.Raw (at most the parse limit plus one octet),
// header is Access.Header, whose Content-Type charset bridges lines that
// are not UTF-8 (RFC 9309 2.2.2), and parse sets the parse limit
// (RFC 9309 2.5). It lets a process compile a body another process fetched
// (a fleet's shared store) into the same rules. It never fails: lines that
// cannot be parsed are skipped (RFC 9309 2.3.1.5).
func ParseBody(body []byte, header http.Header, parse robots.Options) *robots.Robots {
	parse.Charset = DeclaredCharset(header)
	return parse.Parse(body)
}
