package proxy

import (
	"fmt"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/usage"
	"github.com/robotsproxy/robotsproxy/policy"
)

// observeLicenseLink records the license a response names in a Link
// header field (rel="license", type="application/rsl+xml"), for the audit
// line, when the request's usage is recorded at all (purposes declared or
// preferences stated). Like Content-Usage it comes with the response, so
// it cannot deny the request it answers. The policy remembers it for the
// resource, so that later requests for it read it (see
// policy.Policy.ObserveLicenseLink).
func (p *Proxy) observeLicenseLink(req *http.Request, st *state, resp *http.Response) {
	d := &st.decision
	if d.Usage == nil {
		return
	}
	var u string
	if len(resp.Header["Link"]) > 0 {
		u = license.LinkURL(resp.Header.Values("Link"), resp.Request.URL)
	}
	if u != "" {
		d.Usage.LicenseLink = u
	}
	if req == nil {
		return
	}
	p.policy().ObserveLicenseLink(d, requestPath(req), u, resp.StatusCode >= 200 && resp.StatusCode <= 299)
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
	if l.Source != "" {
		e = e.Str(auditlog.FieldLicenseSource, string(l.Source))
	}
	if l.SHA256 != [32]byte{} {
		e = e.Hex(auditlog.FieldLicenseSHA256, l.SHA256[:])
	}
	if !l.FetchedAt.IsZero() {
		e = appendTime(e, auditlog.FieldLicenseFetchedAt, l.FetchedAt)
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
