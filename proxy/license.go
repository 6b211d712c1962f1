package proxy

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/license"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/usage"
)

// checkLicense reads the RSL license robots.txt names (a License line),
// when purposes are declared for the request and Usage.Licenses is set,
// and records what it says in the decision; with Usage.Enforce a
// prohibited purpose, a required license token or a license that cannot
// be read denies the request (policy.DenyForLicense). A robots.txt
// without a License line costs one flag test.
func (p *Proxy) checkLicense(req *http.Request, st *state, purposes []string) {
	d := &st.decision
	src := p.opts.Usage.Licenses
	if src == nil || len(purposes) == 0 || d.Robots == nil || !d.Robots.HasLicense() {
		return
	}
	host := req.URL.Host
	if host == "" {
		host = req.Host
	}
	path := d.ResolvedPath
	if path == "" {
		path = requestPath(req)
	}
	l := src.Check(req.Context(), d.Robots, host, path, purposes)
	p.policy().DenyForLicense(d, st.pin, l, p.opts.Usage.Enforce)
}

// observeLicenseLink records the license a response names in a Link
// header field (rel="license", type="application/rsl+xml"), for the audit
// line, when the request's usage is recorded at all (purposes declared or
// preferences stated). Like Content-Usage it comes with the response, so
// it cannot deny the request it answers; it is not fetched, and not kept
// for later requests: robots.txt's License line is what decides them.
func observeLicenseLink(st *state, resp *http.Response) {
	d := &st.decision
	if d.Usage == nil || len(resp.Header["Link"]) == 0 {
		return
	}
	if u := license.LinkURL(resp.Header.Values("Link"), resp.Request.URL); u != "" {
		d.Usage.LicenseLink = u
	}
}

// licenseFields adds the license fields of the decision to an audit line.
func licenseFields(f fieldWriter, e *zerolog.Event, ev *usage.Evaluation) *zerolog.Event {
	if ev.LicenseLink != "" {
		e = f.str(e, auditlog.FieldLicenseLink, ev.LicenseLink)
	}
	l := ev.License
	if l == nil {
		return e
	}
	e = f.str(e, auditlog.FieldLicenseURL, l.URL)
	if l.SHA256 != [32]byte{} {
		e = e.Str(auditlog.FieldLicenseSHA256, hex.EncodeToString(l.SHA256[:]))
	}
	if !l.FetchedAt.IsZero() {
		e = e.Str(auditlog.FieldLicenseFetchedAt, l.FetchedAt.UTC().Format(time.RFC3339Nano))
	}
	e = e.Str(auditlog.FieldLicenseDecision, string(l.Decision))
	if l.Element != "" {
		e = f.str(e, auditlog.FieldLicenseElement, l.Element)
	}
	if l.Refused != "" {
		e = e.Str(auditlog.FieldLicenseRefused, l.Refused)
	}
	if l.Err != nil {
		e = f.str(e, auditlog.FieldLicenseError, l.Err.Error())
	}
	return e
}

// licenseDenialText explains a refusal for an RSL license; "" when the
// decision carries no license.
func licenseDenialText(d *policy.Decision) string {
	if d.Usage == nil || d.Usage.License == nil {
		return ""
	}
	l := d.Usage.License
	switch l.Decision {
	case usage.LicenseProhibited:
		return fmt.Sprintf("robotsproxy: the license %s prohibits the purpose %q declared for product token %q (%s)\n",
			l.URL, l.Refused, d.Identity.Token, l.Element)
	case usage.LicenseRequired:
		return fmt.Sprintf("robotsproxy: the license %s requires a license token from its License Server %s for this URL (%s); robotsproxy does not obtain one\n",
			l.URL, l.Server, l.Element)
	}
	return fmt.Sprintf("robotsproxy: the license %s could not be read (%v), which denies the declared purposes while usage.enforce is on\n",
		l.URL, l.Err)
}

// isLicense reports whether d is a denial for an RSL license that carries
// the license.
func isLicense(d *policy.Decision) bool {
	return (d.Reason == policy.ReasonLicense || d.Reason == policy.ReasonLicenseRequired) &&
		d.Usage != nil && d.Usage.License != nil
}

// licenseRule is the X-Robotsproxy-Rule of a license denial: the license
// URL and the element that decided, "LICENSE-URL <content url=...>", or
// the URL and the decision when no element applied.
func licenseRule(l *usage.License) string {
	if l.Element == "" {
		return l.URL + " " + string(l.Decision)
	}
	return l.URL + " " + l.Element
}
