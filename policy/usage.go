package policy

import (
	"context"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/robots"
)

// UsageOptions configure the usage step of Decide: the purposes declared
// for crawlers, compared with the usage preferences and RSL licenses
// robots.txt states.
type UsageOptions struct {
	// Enforce denies (reason usage-preference, license or
	// license-required) a request whose declared purpose robots.txt or its
	// license refuses for the path; report mode forwards it and audits the
	// denial. Default false: preferences and licenses are only recorded.
	Enforce bool
	// Declarations are the purposes declared per product token; nil
	// declares none. Those of users and client ranges come with their pin
	// (Pin.Purposes).
	Declarations *Declarations
	// Licenses fetch and cache the RSL licenses robots.txt files name
	// (License lines) and those responses name in Link header fields,
	// read for requests with declared purposes. Nil reads none.
	Licenses Licenses
}

// Licenses read the RSL licenses that robots.txt files name (License
// lines) and those responses name in Link header fields (the robotsproxy
// server's fetch, cache and archive them). Implementations are safe for
// concurrent use.
type Licenses interface {
	// Check returns what the license robots.txt r names says about a
	// request for path at host by a crawler declared for purposes,
	// fetching it when needed; nil when r names none or no purpose is
	// declared. A license that cannot be read is returned with
	// LicenseUnreadable (fail closed).
	Check(ctx context.Context, r *robots.Robots, host, path string, purposes []string) *License
	// CheckLink is Check for the license an earlier response for
	// resource (the canonical authority and the path as decided) named
	// in a Link header field (RememberLink); nil when none is remembered.
	CheckLink(ctx context.Context, resource, host, path string, purposes []string) *License
	// RememberLink remembers url, the license a response for resource
	// named in a Link header field, for CheckLink; url "" forgets it.
	RememberLink(resource, url string)
}

// decideUsage is Decide's usage step, run on every decision Decide makes:
// it compares the purposes declared for the request (pinned, else its
// product token's) with the usage preferences robots.txt states for it
// (DecideUsage), then, with purposes declared, reads the RSL licenses that
// apply (DecideLicense). Nothing is recorded when no purpose is declared
// and no preference is stated.
func (p *Policy) decideUsage(ctx context.Context, d *Decision, r Request) {
	o := &p.opts.Usage
	purposes := o.Declarations.Purposes(r.Pin.Purposes, d.Identity.Token)
	if len(d.UsagePrefs) == 0 && len(purposes) == 0 {
		return
	}
	DecideUsage(d, purposes, o.Enforce)
	if o.Licenses == nil || len(purposes) == 0 || d.Robots == nil {
		return
	}
	DecideLicense(d, p.readLicense(ctx, d, r, purposes), o.Enforce)
}

// DecideUsage records in d how the purposes declared for the crawler
// compare with the usage preferences robots.txt states for the request
// (d.UsagePrefs; see EvaluateUsage), and, with enforce, turns d into a
// denial, reason usage-preference, when a declared purpose is refused and
// d would forward the request: a usage preference denies only what
// robots.txt allows. Decide applies the request's mode after it (report
// mode forwards the denial). The proxy (through Decide) and audit verify
// decide usage preferences through it.
func DecideUsage(d *Decision, purposes []string, enforce bool) {
	e := EvaluateUsage(purposes, d.UsagePrefs)
	d.Usage = &e
	if !enforce || e.Refused == "" || !d.Allowed {
		return
	}
	d.Allowed, d.Reason = false, auditlog.ReasonUsage
}

// readLicense reads the RSL licenses that apply to the request: the one
// robots.txt names (a License line) and the one an earlier response for
// the same resource named in a Link header field (Observe). A
// purpose either refuses is refused: the robots.txt license is read
// first, and the Link one decides only when robots.txt's does not refuse
// the request. nil when neither applies.
func (p *Policy) readLicense(ctx context.Context, d *Decision, r Request, purposes []string) *License {
	src := p.opts.Usage.Licenses
	path := d.DecidedPath(r.Path)
	var l *License
	if d.Robots.HasLicense() {
		l = src.Check(ctx, d.Robots, r.Host, path, purposes)
	}
	if l == nil || !l.Refuses() {
		if ll := src.CheckLink(ctx, d.licenseResource(path), r.Host, path, purposes); ll != nil && (l == nil || ll.Refuses()) {
			l = ll
		}
	}
	return l
}

// DecideLicense records in d what an RSL license says about the request
// (l; nil records nothing), and, with enforce, turns d into a denial when
// l refuses it (License.Refuses) and d would forward the request:
// reason license-required when a License Server token is required,
// license for a prohibited purpose or a license that could not be read
// (fail closed). Decide applies the request's mode after it. The proxy
// (through Decide) and audit verify decide licenses through it.
func DecideLicense(d *Decision, l *License, enforce bool) {
	if l == nil {
		return
	}
	if d.Usage == nil {
		d.Usage = &Usage{}
	}
	d.Usage.License = l
	if !enforce || !l.Refuses() || !d.Allowed {
		return
	}
	d.Allowed, d.Reason = false, auditlog.ReasonLicense
	if l.Decision == LicenseRequired {
		d.Reason = auditlog.ReasonLicenseRequired
	}
}

// DecidedPath returns the path the request was decided on: the reading
// that decided (ResolvedPath) when it is not the path as sent, else sent.
// Usage preferences and licenses are read for it.
func (d *Decision) DecidedPath(sent string) string {
	if d.ResolvedPath != "" {
		return d.ResolvedPath
	}
	return sent
}

// licenseResource is the key a Link-named license is remembered under:
// the canonical authority (robots.txt's URL without /robots.txt) and the
// path as decided.
func (d *Decision) licenseResource(path string) string {
	return strings.TrimSuffix(d.RobotsURL, "/robots.txt") + path
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
	path := d.DecidedPath(rs.raw)
	var u robots.UsagePrefs // no Content-Usage rule: skip Usage's second path match
	if r.HasContentUsage() {
		u = r.Usage(path, tokens...)
	}
	d.UsagePrefs = RobotsPreferences(u, e)
}
