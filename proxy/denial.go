package proxy

import (
	"io"
	"net/http"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

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
