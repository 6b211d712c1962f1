package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/usage"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Response headers that explain a refusal.
const (
	HeaderDecision  = "X-Robotsproxy-Decision"
	HeaderReason    = "X-Robotsproxy-Reason"
	HeaderToken     = "X-Robotsproxy-Product-Token"
	HeaderRule      = "X-Robotsproxy-Rule"
	HeaderRobotsURL = "X-Robotsproxy-Robots-Url"
	HeaderAccess    = "X-Robotsproxy-Access-Result"
	// HeaderUnreachable is why robots.txt was unreachable: "dns",
	// "connect", "tls", "timeout", "status N", "too-large", "redirects",
	// "destination-refused" or "other" (see access.Cause).
	HeaderUnreachable = "X-Robotsproxy-Unreachable"
	// HeaderHint says what the operator changes to lift a refusal that
	// is theirs to lift, naming the configuration key and the flag
	// (policy.Decision.Hint): a CONNECT port, an origin's private CA.
	HeaderHint = "X-Robotsproxy-Hint"
)

// maxHeaderValue bounds explanatory header values; robots.txt lines can be
// long.
const maxHeaderValue = 256

// rejectResponse is the one function that turns a denial into a response:
// 403 Forbidden with headers naming the product token, the deciding rule or
// access result, and the robots.txt URL, and a short text body; 400 Bad
// Request instead for a target that cannot be enforced as sent (reason
// "bad-request"); 503 Service Unavailable, with Retry-After, for a request
// refused because the audit log cannot be written (reason
// "audit-unavailable"); or, for a proxy authentication failure, 407 with a Basic challenge for realm; or,
// for throttled proxy authentication, 429 with Retry-After in seconds (RFC
// 6585 4, RFC 9110 10.2.3) and no challenge. It is rejectWith with no
// unreachable retry to tell.
func rejectResponse(req *http.Request, d *policy.Decision, realm string) *http.Response {
	return rejectWith(req, d, realm, 0)
}

// rejectWith is rejectResponse whose 403 for reason unreachable also says
// when robots.txt is tried again: retry (cache.unreachable_retry) after
// the fetch that found it unreachable; 0 says nothing of it.
func rejectWith(req *http.Request, d *policy.Decision, realm string, retry time.Duration) *http.Response {
	h := http.Header{}
	status := http.StatusForbidden
	switch {
	case d.NeedsAuth():
		status = http.StatusProxyAuthRequired
		h.Set("Proxy-Authenticate", fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", realm))
	case d.Reason == policy.ReasonBadRequest:
		status = http.StatusBadRequest // an ambiguous or unenforceable target
	case d.Reason == policy.ReasonURITooLong:
		status = http.StatusRequestURITooLong // inside a tunnel (onRequest); outside, refuseTarget
	case d.Reason == policy.ReasonAuditUnavailable:
		status = http.StatusServiceUnavailable // not forwarded: no answer without its audit line
		h.Set("Retry-After", "1")
	case d.Reason == policy.ReasonHeaderTooLarge:
		status = http.StatusRequestHeaderFieldsTooLarge // inside a tunnel (refuseHeader); outside, the server
	case d.TooManyRequests(): // throttled authentication, politeness
		status = http.StatusTooManyRequests
		h.Set("Retry-After", strconv.FormatInt(d.RetryAfterSeconds(), 10))
	}
	setDenyFields(h, d.Reason)
	h.Set(HeaderToken, headerValue(d.Identity.Token))
	if d.RobotsURL != "" {
		h.Set(HeaderRobotsURL, headerValue(d.RobotsURL))
	}
	if d.Access != "" {
		h.Set(HeaderAccess, string(d.Access))
	}
	if c := d.UnreachableCause(); c != "" {
		h.Set(HeaderUnreachable, c)
	}
	if d.Reason == policy.ReasonUsage && d.Usage != nil {
		h.Set(HeaderRule, headerValue(d.Usage.Deciding.String()))
	} else if isLicense(d) {
		h.Set(HeaderRule, headerValue(licenseRule(d.Usage.License)))
	} else if r := d.Rule(); r != nil && !d.TooManyRequests() {
		h.Set(HeaderRule, headerValue(fmt.Sprintf("line %d: %s", r.Line, r.Text())))
	}
	body := denialText(d) + unreachableRetryText(d, retry)
	if hint := d.Hint(); hint != "" {
		h.Set(HeaderHint, hint)
		body += "robotsproxy: " + hint + "\n"
	}
	return textResponse(req, status, h, body)
}

// unreachableRetryText says, for a denial with reason unreachable, when
// the robots.txt fetch that found it unreachable was made and when
// robotsproxy tries again: retry after it (RFC 9309 2.3.1.4 lets a crawler
// keep the complete disallow while robots.txt stays unreachable). Empty
// for other denials, or when the fetch time or retry is not known.
func unreachableRetryText(d *policy.Decision, retry time.Duration) string {
	if d.Reason != policy.ReasonUnreachable || retry <= 0 || d.RobotsFetchedAt.IsZero() {
		return ""
	}
	at := d.RobotsFetchedAt.UTC()
	return fmt.Sprintf("robotsproxy: robots.txt was fetched at %s; it is fetched again after %s (cache.unreachable_retry %v) or when the configuration is reloaded (SIGHUP), and until then every request to this authority is refused\n",
		at.Format(time.RFC3339), at.Add(retry).Format(time.RFC3339), retry)
}

// denialText explains a denial in one line.
func denialText(d *policy.Decision) string {
	token := d.Identity.Token
	switch d.Reason {
	case policy.ReasonRule:
		r := d.Rule()
		return fmt.Sprintf("robotsproxy: %s disallows this URL for product token %q (line %d: %s)\n",
			d.RobotsURL, token, r.Line, r.Text())
	case policy.ReasonUnreachable:
		return fmt.Sprintf("robotsproxy: %s is unreachable (%s), which means complete disallow (RFC 9309 2.3.1.4)\n",
			d.RobotsURL, unreachableText(d))
	case policy.ReasonDestination:
		return "robotsproxy: the destination resolves to a refused (non-public) address\n"
	case policy.ReasonAuthRequired:
		return "robotsproxy: proxy authentication required (Proxy-Authorization: Basic)\n"
	case policy.ReasonAuthFailed:
		return "robotsproxy: proxy authentication failed\n"
	case policy.ReasonAuthThrottled:
		return fmt.Sprintf("robotsproxy: too many failed proxy authentication attempts; retry in %d seconds\n", d.RetryAfterSeconds())
	case policy.ReasonUsage, policy.ReasonCrawlDelay, policy.ReasonBackoff, policy.ReasonHostConcurrency:
		if text := politeDenialText(d); text != "" {
			return text
		}
	case policy.ReasonLicense, policy.ReasonLicenseRequired:
		if text := licenseDenialText(d); text != "" {
			return text
		}
	case policy.ReasonUnidentifiedTunnel:
		return "robotsproxy: CONNECT refused (unidentified-tunnel): the tunnel names no crawler, so its requests could only be decided for \"/\" under the \"*\" group. " +
			"Send a User-Agent header with your crawler's product token on the CONNECT request itself (curl --proxy-header, Go's Transport.ProxyConnectHeader), " +
			"or have the operator pin your client (identity.users, identity.client_ranges), or configure a CA (mitm) so every request is decided on its path.\n"
	case policy.ReasonAuditUnavailable:
		return "robotsproxy: the audit log cannot be written, so the request was not forwarded; retry later\n"
	case policy.ReasonHostDenied, policy.ReasonConnectPort, policy.ReasonConnectRefused, policy.ReasonBadRequest,
		policy.ReasonURITooLong, policy.ReasonHeaderTooLarge:
		return fmt.Sprintf("robotsproxy: request refused (%s): %v\n", d.Reason, d.Err)
	}
	return fmt.Sprintf("robotsproxy: request denied (%s)\n", d.Reason)
}

// unreachableText says why robots.txt was unreachable, for a person:
// the cause as the header gives it ("dns", "status 500") and what it
// means, or the status alone when the cause is not known.
func unreachableText(d *policy.Decision) string {
	c := d.UnreachableCause()
	if c == "" {
		return fmt.Sprintf("status %d", d.Status)
	}
	return c + ": " + causeHint(d.Cause)
}

// causeHint says what an unreachable cause means.
func causeHint(c access.Cause) string {
	switch c {
	case access.CauseDNS:
		return "the host name does not resolve"
	case access.CauseConnect:
		return "the connection to the origin failed"
	case access.CauseTLS:
		return "the TLS handshake with the origin failed: its certificate is not trusted or does not match the name, or it speaks no TLS the proxy accepts"
	case access.CauseTimeout:
		return "the origin did not answer in time"
	case access.CauseStatus:
		return "the origin answered with a status that makes robots.txt unreachable"
	case access.CauseTooLarge:
		return "the origin's response header is too large"
	case access.CauseRedirects:
		return "a redirect could not be followed"
	case access.CauseDestination:
		return "the destination resolves to a refused (non-public) address"
	}
	return "the origin's answer could not be read"
}

// upstreamErrorResponse answers a request whose upstream round trip failed:
// 403 when the dial-time guard refused the address (a DNS answer that
// changed after the robots.txt fetch), 503 or 408 when the proxy cut the
// request off (see cutOffResponse), 502 otherwise.
func upstreamErrorResponse(req *http.Request, err error, st *state) *http.Response {
	if resp := cutOffResponse(req); resp != nil {
		return resp
	}
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	if netguard.IsRefused(err) {
		if st.decided {
			policy.DecideDialRefused(&st.decision, err)
			return rejectResponse(req, &st.decision, "")
		}
		return textResponse(req, http.StatusForbidden, h, denialText(&policy.Decision{Reason: policy.ReasonDestination}))
	}
	if st.decided && st.decision.Err == nil {
		st.decision.Err = err // the audit line's "error"
	}
	return textResponse(req, http.StatusBadGateway, h, fmt.Sprintf("robotsproxy: upstream error: %v\n", err))
}

// setDenyFields sets the fields of every refusal's text answer: its type,
// no caching, and robotsproxy's decision and reason.
func setDenyFields(h http.Header, reason policy.Reason) {
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set(HeaderDecision, "deny")
	h.Set(HeaderReason, string(reason))
}

// textResponse builds a complete response with a text body.
func textResponse(req *http.Request, status int, h http.Header, body string) *http.Response {
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		StatusCode:    status,
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// headerValue makes text from a robots.txt file safe for a header value:
// control and non-ASCII octets become "?", and the length is bounded.
func headerValue(s string) string {
	if len(s) > maxHeaderValue {
		s = s[:maxHeaderValue]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7F {
			return '?'
		}
		return r
	}, s)
}

// reject answers a denial. A robots.txt denial (reason "rule" or
// "unreachable") of a plain-HTTP request is written straight to the client
// from a rendering of rejectResponse's response made once per
// (robots.txt URL, rule or status and unreachable cause, product token), and goproxy gets an
// empty placeholder that writes nothing; every other denial is
// rejectResponse's response, which goproxy copies to the client.
func (p *Proxy) reject(req *http.Request, st *state, d *policy.Decision) *http.Response {
	if st.w == nil || d.Reason != policy.ReasonRule && d.Reason != policy.ReasonUnreachable {
		return rejectWith(req, d, p.opts.AuthRealm, p.opts.UnreachableRetry)
	}
	k := denialKey{reason: d.Reason, token: d.Identity.Token, robotsURL: d.RobotsURL, access: d.Access,
		status: d.Status, cause: d.Cause, rule: d.Verdict.Rule}
	if d.Reason == policy.ReasonUnreachable {
		k.fetchedAt = d.RobotsFetchedAt.UnixNano() // the body says when it is tried again
	}
	r, ok := p.denials.Get(k)
	if !ok {
		if r = renderResponse(rejectWith(req, d, p.opts.AuthRealm, p.opts.UnreachableRetry)); len(r.body) <= maxRenderedBody {
			p.denials.Put(k, r)
		}
	}
	r.write(st.w)
	st.w.done = true
	return &http.Response{StatusCode: r.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, Request: req}
}

// denialKey is everything rejectResponse reads from a decision with reason
// "rule" or "unreachable".
type denialKey struct {
	reason    policy.Reason
	token     string
	robotsURL string
	access    access.AccessResult
	status    int
	cause     access.Cause
	rule      robots.Rule
	fetchedAt int64 // unreachable: the fetch's time, in Unix nanoseconds
}

// rendered is a response rendered once and written many times.
type rendered struct {
	status int
	fields []renderedField
	body   string
}

type renderedField struct {
	key    string
	values []string // shared by every response: len == cap, so never appended to in place
}

// renderResponse renders resp, a complete response with a text body
// (textResponse).
func renderResponse(resp *http.Response) *rendered {
	r := &rendered{status: resp.StatusCode}
	for k, v := range resp.Header {
		r.fields = append(r.fields, renderedField{key: k, values: v[:len(v):len(v)]})
	}
	body, _ := io.ReadAll(resp.Body) // a strings.Reader
	r.body = string(body)
	return r
}

// write writes the response to w.
func (r *rendered) write(w http.ResponseWriter) {
	h := w.Header()
	for _, f := range r.fields {
		h[f.key] = f.values
	}
	w.WriteHeader(r.status)
	_, _ = io.WriteString(w, r.body)
}

// denials remembers rendered denials, at most denialsMax; cleared when
// full (the product tokens come from clients).
type denials = memo.Sync[denialKey, *rendered]

const denialsMax = 1024

// maxRenderedBody is the largest denial body kept rendered, in octets: a
// long rule (up to a robots.txt line) or product token is rendered for its
// request only, so the renderings hold at most about denialsMax × 2 KiB
// of bodies (and as much again in their keys).
const maxRenderedBody = 2 << 10

// politeDenialText explains a refusal for a usage preference, or for
// politeness; "" when it cannot (denialText's general text applies).
func politeDenialText(d *policy.Decision) string {
	token := d.Identity.Token
	switch d.Reason {
	case policy.ReasonUsage:
		if d.Usage == nil {
			break
		}
		return fmt.Sprintf("robotsproxy: %s refuses the purpose %q declared for product token %q (%s)\n",
			d.RobotsURL, d.Usage.Refused, token, d.Usage.Deciding)
	case policy.ReasonCrawlDelay:
		return fmt.Sprintf("robotsproxy: too early for product token %q at this site (crawl delay); retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case policy.ReasonBackoff:
		return fmt.Sprintf("robotsproxy: the origin asked product token %q to back off; retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case policy.ReasonHostConcurrency:
		return fmt.Sprintf("robotsproxy: too many requests in flight to this site; retry in %d seconds\n", d.RetryAfterSeconds())
	}
	return "" // denialText's general text
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
