package policy

import (
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// This file puts a decision into words for the client: a refusal's text
// body and the rule its X-Robotsproxy-Rule header names are rendered from
// these, so that every refusal explains itself the same way.

// Text explains a denial to the client in one line, as a refusal's body
// says it: what refused the request and why (the deciding rule, the
// unreachable cause and what it means, the purpose a usage preference or
// license refuses, when to retry), each line starting "robotsproxy: ".
// retry is how long an unreachable robots.txt result is kept
// (cache.unreachable_retry): a denial for reason unreachable then says, on
// a second line, when robots.txt is fetched again; 0 says nothing of it.
// A refusal the operator can lift ends with a line saying how (Hint).
func (d *Decision) Text(retry time.Duration) string {
	text := d.text() + d.unreachableRetryText(retry)
	if hint := d.Hint(); hint != "" {
		text += "robotsproxy: " + hint + "\n"
	}
	return text
}

// text is Text's first line.
func (d *Decision) text() string {
	token := d.Identity.Token
	switch d.Reason {
	case auditlog.ReasonRule:
		r := d.Rule()
		return fmt.Sprintf("robotsproxy: %s disallows this URL for product token %q (line %d: %s)\n",
			d.RobotsURL, token, r.Line, r.Text())
	case auditlog.ReasonUnreachable:
		return fmt.Sprintf("robotsproxy: %s is unreachable (%s), which means complete disallow (RFC 9309 2.3.1.4)\n",
			d.RobotsURL, d.unreachableText())
	case auditlog.ReasonDestination:
		return "robotsproxy: the destination resolves to a refused (non-public) address\n"
	case auditlog.ReasonAuthRequired:
		return "robotsproxy: proxy authentication required (Proxy-Authorization: Basic)\n"
	case auditlog.ReasonAuthFailed:
		return "robotsproxy: proxy authentication failed\n"
	case auditlog.ReasonAuthThrottled:
		return fmt.Sprintf("robotsproxy: too many failed proxy authentication attempts; retry in %d seconds\n", d.RetryAfterSeconds())
	case auditlog.ReasonUsage, auditlog.ReasonCrawlDelay, auditlog.ReasonBackoff, auditlog.ReasonHostConcurrency:
		if text := d.politeText(); text != "" {
			return text
		}
	case auditlog.ReasonLicense, auditlog.ReasonLicenseRequired:
		if text := d.licenseText(); text != "" {
			return text
		}
	case auditlog.ReasonUnidentifiedTunnel:
		return "robotsproxy: CONNECT refused (unidentified-tunnel): the tunnel names no crawler, so its requests could only be decided for \"/\" under the \"*\" group. " +
			"Send a User-Agent header with your crawler's product token on the CONNECT request itself (curl --proxy-header, Go's Transport.ProxyConnectHeader), " +
			"or have the operator pin your client (identity.users, identity.client_ranges), or configure a CA (mitm) so every request is decided on its path.\n"
	case auditlog.ReasonAuditUnavailable:
		return "robotsproxy: the audit log cannot be written, so the request was not forwarded; retry later\n"
	case auditlog.ReasonHostDenied, auditlog.ReasonConnectPort, auditlog.ReasonConnectRefused, auditlog.ReasonBadRequest,
		auditlog.ReasonURITooLong, auditlog.ReasonHeaderTooLarge:
		return fmt.Sprintf("robotsproxy: request refused (%s): %v\n", d.Reason, d.Err)
	}
	return fmt.Sprintf("robotsproxy: request denied (%s)\n", d.Reason)
}

// unreachableRetryText says, for a denial with reason unreachable, when
// the robots.txt fetch that found it unreachable was made and when
// robotsproxy tries again: retry after it, or at a reload, which ends
// every cached unreachable result (RFC 9309 2.3.1.4 lets a crawler keep
// the complete disallow while robots.txt stays unreachable). Empty
// for other denials, or when the fetch time or retry is not known.
func (d *Decision) unreachableRetryText(retry time.Duration) string {
	if d.Reason != auditlog.ReasonUnreachable || retry <= 0 || d.RobotsFetchedAt.IsZero() {
		return ""
	}
	at := d.RobotsFetchedAt.UTC()
	return fmt.Sprintf("robotsproxy: robots.txt was fetched at %s; it is fetched again after %s (cache.unreachable_retry %v) or when the configuration is reloaded (SIGHUP), and until then every request to this authority is refused\n",
		at.Format(time.RFC3339), at.Add(retry).Format(time.RFC3339), retry)
}

// unreachableText says why robots.txt was unreachable, for a person: the
// cause as the header gives it ("dns", "status 500") and what it means
// (Cause.Hint), or the status alone when the cause is not known.
func (d *Decision) unreachableText() string {
	c := d.UnreachableCause()
	if c == "" {
		return fmt.Sprintf("status %d", d.Status)
	}
	return c + ": " + d.Cause.Hint()
}

// Hint says what an unreachable cause means, for a person.
func (c Cause) Hint() string {
	switch c {
	case CauseDNS:
		return "the host name does not resolve"
	case CauseConnect:
		return "the connection to the origin failed"
	case CauseTLS:
		return "the TLS handshake with the origin failed: its certificate is not trusted or does not match the name, or it speaks no TLS the proxy accepts"
	case CauseTimeout:
		return "the origin did not answer in time"
	case CauseStatus:
		return "the origin answered with a status that makes robots.txt unreachable"
	case CauseTooLarge:
		return "the origin's response header is too large"
	case CauseRedirects:
		return "a redirect could not be followed"
	case CauseDestination:
		return "the destination resolves to a refused (non-public) address"
	}
	return "the origin's answer could not be read"
}

// politeText explains a refusal for a usage preference, or for
// politeness; "" when it cannot (text's general words apply).
func (d *Decision) politeText() string {
	token := d.Identity.Token
	switch d.Reason {
	case auditlog.ReasonUsage:
		if d.Usage == nil {
			break
		}
		return fmt.Sprintf("robotsproxy: %s refuses the purpose %q declared for product token %q (%s)\n",
			d.RobotsURL, d.Usage.Refused, token, d.Usage.Deciding)
	case auditlog.ReasonCrawlDelay:
		return fmt.Sprintf("robotsproxy: too early for product token %q at this site (crawl delay); retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case auditlog.ReasonBackoff:
		return fmt.Sprintf("robotsproxy: the origin asked product token %q to back off; retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case auditlog.ReasonHostConcurrency:
		return fmt.Sprintf("robotsproxy: too many requests in flight to this site; retry in %d seconds\n", d.RetryAfterSeconds())
	}
	return ""
}

// licenseText explains a refusal for an RSL license; "" when the decision
// carries no license.
func (d *Decision) licenseText() string {
	if d.Usage == nil || d.Usage.License == nil {
		return ""
	}
	l := d.Usage.License
	switch l.Decision {
	case LicenseProhibited:
		return fmt.Sprintf("robotsproxy: the license %s prohibits the purpose %q declared for product token %q (%s)\n",
			l.URL, l.Refused, d.Identity.Token, l.Element)
	case LicenseRequired:
		return fmt.Sprintf("robotsproxy: the license %s requires a license token from its License Server %s for this URL (%s); robotsproxy does not obtain one\n",
			l.URL, l.Server, l.Element)
	}
	return fmt.Sprintf("robotsproxy: the license %s could not be read (%v), which denies the declared purposes while usage.enforce is on\n",
		l.URL, l.Err)
}

// Deciding returns what decided a denial, as its X-Robotsproxy-Rule
// header names it: the usage statement that refused a declared purpose
// ("line N: Content-Usage: ..."), the RSL license and its content element
// ("LICENSE-URL <content url=...>", or the URL and the license's decision
// when no element applied), or the robots.txt rule ("line N: Disallow:
// ..."). "" when none did, and for a politeness refusal, which no rule
// decided.
func (d *Decision) Deciding() string {
	switch {
	case d.Reason == auditlog.ReasonUsage && d.Usage != nil:
		return d.Usage.Deciding.String()
	case (d.Reason == auditlog.ReasonLicense || d.Reason == auditlog.ReasonLicenseRequired) && d.Usage != nil && d.Usage.License != nil:
		l := d.Usage.License
		if l.Element == "" {
			return l.URL + " " + string(l.Decision)
		}
		return l.URL + " " + l.Element
	}
	if r := d.Rule(); r != nil && !d.TooManyRequests() {
		return fmt.Sprintf("line %d: %s", r.Line, r.Text())
	}
	return ""
}
