package verify

import (
	"fmt"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// licenseReasons are the license decisions each license reason stands
// for.
var licenseReasons = map[policy.Reason][]policy.LicenseDecision{
	auditlog.ReasonLicense:         {policy.LicenseProhibited, policy.LicenseUnreadable},
	auditlog.ReasonLicenseRequired: {policy.LicenseRequired},
}

// checkLicense checks a line with reason license or license-required:
// robots.txt's own decision, re-decided, allows the request (a license
// denies only what robots.txt allows) and, for license_source robots.txt
// (or none, on older lines), its first License line names license_url;
// the archived license document (license_sha256), parsed and decided for
// the line's purposes, host and path, gives license_decision and
// license_refused. For license_source link the license was named by a
// Link header field of an earlier response for the resource, which the
// archive does not keep: that it was named cannot be checked, and the
// decision is verified from the archived license alone. A license that
// was not read at all (unreadable without license_sha256: unreachable, or
// larger than the limit) has nothing to re-decide: the line is
// unverifiable.
func (d *decider) checkLicense(l *auditLine) (Kind, string, error) {
	if k, msg := l.licenseForm(); k != "" {
		return k, msg, nil
	}
	dec, from, k, msg, err := d.redecideBefore(l, "the license")
	if k != "" || err != nil {
		return k, msg, err
	}
	switch policy.LicenseSource(l.LicenseSource) {
	case "", policy.LicenseFromRobots:
		refs := dec.Robots.Licenses()
		if len(refs) == 0 || refs[0].URL != l.LicenseURL {
			return KindDecision, fmt.Sprintf("license_url %q, but %s names no such License line first", l.LicenseURL, from), nil
		}
	case policy.LicenseFromLink:
		// Named by an earlier response's Link header field: not archived.
	default:
		return KindDecision, fmt.Sprintf("license_source %q is neither %s nor %s", l.LicenseSource, policy.LicenseFromRobots, policy.LicenseFromLink), nil
	}
	if l.LicenseSHA256 == "" {
		return KindUnverifiable, "license_decision unreadable without license_sha256: the license was not read (unreachable, or larger than the limit)", nil
	}
	body, err := audit.ReadBody(d.dir, l.LicenseSHA256)
	if err != nil {
		_, k, msg, err := bodyProblem(l.LicenseSHA256, err)
		return k, msg, err
	}
	// The archived document, decided as the proxy decides a fetched one.
	doc := policy.Access{Result: policy.Successful}
	if lic, perr := license.Parse(body); perr == nil {
		doc.Doc = lic
	} else {
		doc.Result, doc.Err = policy.Unreachable, perr
	}
	_, host, _ := l.target()
	policy.DecideLicense(&dec, license.Decide(&doc, robots.License{URL: l.LicenseURL}, host, dec.DecidedPath(l.path()), l.Purposes), true)
	got, refused := dec.Usage.License.Decision, dec.Usage.License.Refused
	if string(got) != l.LicenseDecision || refused != l.LicenseRefused {
		return KindDecision, fmt.Sprintf("license_decision %s (refused %q), but the archived license %.16s… gives %s (refused %q) for the purposes %q",
			l.LicenseDecision, l.LicenseRefused, l.LicenseSHA256, got, refused, l.Purposes), nil
	}
	return "", "", nil
}

// licenseForm checks the fields a license line must have: decision deny,
// access_result successful (robots.txt named the license), license_url,
// and a license_decision its reason stands for.
func (l *auditLine) licenseForm() (Kind, string) {
	ok := l.Decision == "deny" && l.Access == string(policy.Successful) && l.LicenseURL != ""
	found := false
	for _, v := range licenseReasons[policy.Reason(l.Reason)] {
		found = found || string(v) == l.LicenseDecision
	}
	if !ok || !found {
		return KindDecision, fmt.Sprintf("reason %s needs decision deny, access_result successful, license_url and license_decision %v; the line has %s, %q, %q, %q",
			l.Reason, licenseReasons[policy.Reason(l.Reason)], l.Decision, l.Access, l.LicenseURL, l.LicenseDecision)
	}
	return "", ""
}
