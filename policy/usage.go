package policy

import (
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/usage"
	"github.com/robotsproxy/robotsproxy/robots"
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

// readExtras records in d what robots.txt r states beyond allow and
// disallow for the product tokens and the request path (rs), reading the
// groups that apply once: the crawl delay and the usage preferences (its
// Content-Usage rules and Content-Signal lines), the latter read for the
// path reading that decided (d.ResolvedPath), else for the path as sent.
// A file with none of these records costs nothing.
func readExtras(d *Decision, r *robots.Robots, rs *readings, tokens []string) {
	usages := r.HasContentUsage() || r.HasContentSignal()
	if !usages && !r.HasCrawlDelay() {
		return
	}
	e := r.Extras(tokens...)
	d.CrawlDelay, d.HasCrawlDelay = e.CrawlDelay()
	if !usages {
		return
	}
	path := d.ResolvedPath
	if path == "" {
		path = rs.raw
	}
	var u robots.UsagePrefs // no Content-Usage rule: skip Usage's second path match
	if r.HasContentUsage() {
		u = r.Usage(path, tokens...)
	}
	d.UsagePrefs = usage.FromRobots(u, e)
}

// DenyForLicense records in d what the RSL license robots.txt names says
// about the request (l; nil records nothing), and turns d into a denial
// when l refuses it (usage.License.Refuses) and d would forward the
// request: reason license-required when a License Server token is
// required, license for a prohibited purpose or a license that could not
// be read (fail closed). The request's mode applies as to a robots.txt
// denial: in report mode the denial is forwarded and audited with
// ReportOnly set. Without enforce, l is recorded only.
func (p *Policy) DenyForLicense(d *Decision, pin identity.Pin, l *usage.License, enforce bool) {
	if l == nil {
		return
	}
	if d.Usage == nil {
		d.Usage = &usage.Evaluation{}
	}
	d.Usage.License = l
	if !enforce || !l.Refuses() || !d.Allowed {
		return
	}
	d.Allowed, d.Reason = false, ReasonLicense
	if l.Decision == usage.LicenseRequired {
		d.Reason = ReasonLicenseRequired
	}
	p.markReportOnly(d, pin)
}
