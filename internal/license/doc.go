// Package license reads RSL 1.0 licenses (Really Simple Licensing,
// rslstandard.org) and decides what they say about a crawler's request for
// the purposes declared for it (package usage).
//
// A site names its license with a "License: <absolute URL>" line of
// robots.txt (robots.Robots.Licenses). The license is an XML document,
// fetched with robots.txt's limits, caching and fail-closed rules
// (access.Fetcher.FetchDocument, access.NewDocumentCache; see Source):
//
//	<rsl xmlns="https://rslstandard.org/rsl">
//	  <content url="/docs/*" server="https://rsl.example.com/api">
//	    <license>
//	      <permits type="usage">search, ai-input</permits>
//	      <prohibits type="usage">ai-train</prohibits>
//	    </license>
//	  </content>
//	</rsl>
//
// # What is read
//
//   - The root element must be rsl (any namespace); a document that is not
//     well-formed XML, or whose root is another element, does not parse.
//   - Each content element's url is a path pattern (starting with "/" or
//     "*") matched as robots.txt rules are (RFC 9309 2.2.2, 2.2.3: "*"
//     and a final "$", percent-encoding normalised; robots.Pattern), or
//     an absolute URL,
//     whose path is that pattern and whose host must be the request's
//     (compared case-insensitively, without port). The element whose
//     pattern matches the request path with the most octets applies; of
//     equally long ones, the first in the document. A content element
//     without url is ignored.
//   - Its optional server attribute names a License Server: a license
//     token is required. robotsproxy does not obtain tokens (the License
//     Server protocol is out of scope): such content is license-required.
//   - Of each license element, the permits and prohibits elements with
//     type="usage" are read: lists of RSL usage values separated by
//     commas or white space. Other types (user, geo) and other elements
//     (payment, legal, ...) are ignored.
//
// # Usage values and purposes
//
// RSL usage values map onto the purposes of package usage:
//
//	RSL value   purposes
//	all         train-ai, search, ai-input
//	ai-all      train-ai, ai-input
//	ai-train    train-ai
//	search      search
//	ai-input    ai-input
//	ai-index    (none: no declared purpose is about building an AI index)
//
// Other values are ignored.
//
// # Terms
//
// Under one license element, a purpose is prohibited when a prohibits list
// names it, or when the license has a permits list that does not name it
// (a permits list is exhaustive); else it is permitted. Prohibits wins.
// When a content element has several license elements (alternatives), a
// purpose is permitted when any of them permits it. A content element
// with no license element permits every purpose.
package license
