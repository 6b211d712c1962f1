package license

import (
	"fmt"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Decide returns what the license says about a request for path at host
// (see Match) by a crawler declared for purposes (in declared order):
// LicenseNoMatch when no content element applies, else LicenseProhibited
// with the first purpose the element's licenses do not permit, else
// LicenseRequired when the element names a License Server, else
// LicensePermitted. c is the element that applied, nil for no match.
func (l *License) Decide(host, path string, purposes []string) (d policy.LicenseDecision, c *Content, refused string) {
	c = l.Match(host, path)
	if c == nil {
		return policy.LicenseNoMatch, nil, ""
	}
	for _, p := range purposes {
		if !c.Permits(p) {
			return policy.LicenseProhibited, c, p
		}
	}
	if c.Server != "" {
		return policy.LicenseRequired, c, ""
	}
	return policy.LicensePermitted, c, ""
}

// Decide returns what the license ref (a License line of robots.txt),
// fetched as a, says about a request for path at host by a crawler
// declared for purposes: a Successful fetch is decided by its License
// (License.Decide); an Unavailable one (4xx) is LicenseUnavailable, no
// terms; anything else, a nil a included, is LicenseUnreadable, which
// fails closed when enforced. The result carries the evidence: URL, line,
// SHA-256 and fetch time.
func Decide(a *policy.Access, ref robots.License, host, path string, purposes []string) *policy.License {
	out := &policy.License{URL: ref.URL, Line: ref.Line, Decision: policy.LicenseUnreadable}
	if a == nil {
		out.Err = fmt.Errorf("license %s was not fetched", ref.URL)
		return out
	}
	out.SHA256, out.FetchedAt = a.SHA256, a.FetchedAt
	switch a.Result {
	case policy.Successful:
		l, ok := a.Doc.(*License)
		if !ok {
			out.Err = fmt.Errorf("license %s: no RSL document", ref.URL)
			return out
		}
		var c *Content
		out.Decision, c, out.Refused = l.Decide(host, path, purposes)
		if c != nil {
			out.Element, out.Server = c.Element(), c.Server
		}
	case policy.Unavailable:
		out.Decision, out.Err = policy.LicenseUnavailable, a.Err
	default:
		out.Err = a.Err
		if out.Err == nil {
			out.Err = fmt.Errorf("license %s is unreachable (%s)", ref.URL, a.Cause.Text(a.Status))
		}
	}
	return out
}
