package policy

import (
	"github.com/robotsproxy/robotsproxy/usage"

	"github.com/robotsproxy/robotsproxy/identity"
)

// DenyForUsage turns d into a denial for a usage preference (reason
// usage-preference) when e refuses a declared purpose and d would forward
// the request, and records e in d either way (nil records nothing). The request's mode applies
// as to a robots.txt denial: in report mode the denial is forwarded and
// audited with ReportOnly set. pin is the request's pinned identity (its
// mode).
func (p *Policy) DenyForUsage(d *Decision, pin identity.Pin, e *usage.Evaluation) {
	d.Usage = e
	if e == nil || e.Refused == "" || !d.Allowed {
		return
	}
	d.Allowed, d.Reason = false, ReasonUsage
	p.markReportOnly(d, pin)
}
