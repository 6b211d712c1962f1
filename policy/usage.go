package policy

import (
	"github.com/robotsproxy/robotsproxy/identity"
	"github.com/robotsproxy/robotsproxy/robots"
	"github.com/robotsproxy/robotsproxy/usage"
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

// UsagePreferences returns the usage preferences robots.txt states for a
// request that d (from DecideAccess or Decide) decided: those of its
// Content-Usage rules and Content-Signal lines for the product tokens,
// read for the path reading that decided (d.ResolvedPath), else for path,
// the path as sent. Nil when d read no robots.txt or it states none. The
// proxy and audit verify both read them here.
func UsagePreferences(d *Decision, path string, tokens []string) usage.Preferences {
	r := d.Robots
	if r == nil || !r.HasContentUsage() && !r.HasContentSignal() {
		return nil
	}
	if d.ResolvedPath != "" {
		path = d.ResolvedPath
	}
	var u robots.UsagePrefs // no Content-Usage rule: skip Usage's second path match
	if r.HasContentUsage() {
		u = r.Usage(path, tokens...)
	}
	return usage.FromRobots(u, r.Extras(tokens...))
}
