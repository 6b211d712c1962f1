package policy

import "time"

// LicenseDecision is what an RSL license says about a
// request for the purposes declared for it; the audit line's
// license_decision.
type LicenseDecision string

// License decisions.
const (
	// LicensePermitted: the content element that applies permits every
	// declared purpose and names no License Server.
	LicensePermitted LicenseDecision = "permitted"
	// LicenseProhibited: the content element that applies prohibits a
	// declared purpose (License.Refused); reason license when enforced.
	LicenseProhibited LicenseDecision = "prohibited"
	// LicenseRequired: the content element that applies names a License
	// Server (server="..."): a license token is required, which
	// robotsproxy does not obtain; reason license-required when enforced.
	LicenseRequired LicenseDecision = "license-required"
	// LicenseNoMatch: no content element of the license matches the
	// request: it states nothing for it.
	LicenseNoMatch LicenseDecision = "no-match"
	// LicenseUnavailable: the license URL answered 4xx (or redirected too
	// often): there are no terms to follow, as for an unavailable
	// robots.txt (RFC 9309 2.3.1.3).
	LicenseUnavailable LicenseDecision = "unavailable"
	// LicenseUnreadable: the license could not be read: unreachable (5xx,
	// network), larger than the limit, or not RSL XML. Fails closed:
	// reason license when enforced, as for an unreachable robots.txt (RFC
	// 9309 2.3.1.4).
	LicenseUnreadable LicenseDecision = "unreadable"
)

// LicenseSource is where the license a request was checked against was
// named: the audit line's license_source.
type LicenseSource string

// License sources.
const (
	// LicenseFromRobots: robots.txt's License line named the license.
	LicenseFromRobots LicenseSource = "robots.txt"
	// LicenseFromLink: an earlier response for the same resource named it
	// in a Link header field (rel="license", type="application/rsl+xml").
	LicenseFromLink LicenseSource = "link"
)

// License is what the RSL license a robots.txt names says about one
// request: the audit line's license fields. It is carried by the
// Usage, behind the decision's pointer, so that a request whose
// robots.txt names no license costs nothing more.
type License struct {
	// URL is the license URL (robots.txt's License line, or the Link
	// header field of an earlier response), Line the License line's
	// 1-based number.
	URL  string
	Line int
	// Source is where the license was named; Line is 0 for
	// LicenseFromLink.
	Source LicenseSource
	// SHA256 is the SHA-256 of the license document read (the key of its
	// copy in the audit archive), zero when none was read.
	SHA256 [32]byte
	// FetchedAt is when the license in force was fetched, zero when no
	// fetch was made.
	FetchedAt time.Time
	// Decision is what the license says for the request.
	Decision LicenseDecision
	// Element is the content element that applied, as
	// `<content url="/docs/*" server="https://...">`, "" when none did.
	Element string
	// Server is that element's License Server URL, "" when none.
	Server string
	// Refused is the first declared purpose the license prohibits, ""
	// unless Decision is LicenseProhibited.
	Refused string
	// Err is why the license could not be read (LicenseUnreadable), or
	// why it was unavailable.
	Err error
}

// Refuses reports whether enforcing the license refuses the request: a
// prohibited purpose, a required license token, or a license that could
// not be read (fail closed).
func (l *License) Refuses() bool {
	switch l.Decision {
	case LicenseProhibited, LicenseRequired, LicenseUnreadable:
		return true
	}
	return false
}
