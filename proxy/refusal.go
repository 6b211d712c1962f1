package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
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
	// "destination-refused" or "other" (see policy.Cause).
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
	case d.Reason == auditlog.ReasonBadRequest:
		status = http.StatusBadRequest // an ambiguous or unenforceable target
	case d.Reason == auditlog.ReasonURITooLong:
		status = http.StatusRequestURITooLong // inside a tunnel (onRequest); outside, refuseTarget
	case d.Reason == auditlog.ReasonAuditUnavailable:
		status = http.StatusServiceUnavailable // not forwarded: no answer without its audit line
		h.Set("Retry-After", "1")
	case d.Reason == auditlog.ReasonHeaderTooLarge:
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
	if r := d.Deciding(); r != "" {
		h.Set(HeaderRule, headerValue(r))
	}
	if hint := d.Hint(); hint != "" {
		h.Set(HeaderHint, hint) // the policy's own words, not the origin's: never cut
	}
	return textResponse(req, status, h, d.Text(retry))
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
		var d policy.Decision // none was made (a request goproxy made itself): only its text is sent
		policy.DecideDialRefused(&d, err)
		return textResponse(req, http.StatusForbidden, h, d.Text(0))
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
	if st.w == nil || d.Reason != auditlog.ReasonRule && d.Reason != auditlog.ReasonUnreachable {
		return rejectWith(req, d, p.opts.AuthRealm, p.opts.UnreachableRetry)
	}
	k := denialKey{reason: d.Reason, token: d.Identity.Token, robotsURL: d.RobotsURL, access: d.Access,
		status: d.Status, cause: d.Cause, rule: d.Verdict.Rule}
	if d.Reason == auditlog.ReasonUnreachable {
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
	access    policy.AccessResult
	status    int
	cause     policy.Cause
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
