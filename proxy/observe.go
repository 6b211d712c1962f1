package proxy

import (
	"context"
	"net/http"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
)

// observeOrigin reports the origin's answer to a forwarded request to
// politeness (back-off, or the success that ends one) and reads its
// Content-Usage header field. resp is the origin's response; responses the
// proxy made itself are left alone.
func (p *Proxy) observeOrigin(resp *http.Response, ctx *goproxy.ProxyCtx) {
	st, _ := ctx.UserData.(*state)
	if st == nil || resp == nil || ctx.Error != nil || !forwarded(st) {
		return
	}
	if t := st.ticket; t != nil {
		_ = p.opts.Politeness.Observe(context.WithoutCancel(ctx.Req.Context()), t, resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("Date")) // a LocalScheduler does not fail
	}
	p.observeUsage(ctx.Req, st, resp)
}

// observeUsage adds the preferences of the response's Content-Usage
// header field (draft-ietf-aipref-attach-05 section 2) to the decision's,
// for the audit line, and observes its Link header field
// (observeLicenseLink). The field comes with the response, after the
// request was decided and sent: it cannot deny the request it answers.
// req is the client's request.
func (p *Proxy) observeUsage(req *http.Request, st *state, resp *http.Response) {
	p.observeLicenseLink(req, st, resp)
	h := policy.HeaderPreferences(resp.Header.Values("Content-Usage"))
	if len(h) == 0 {
		return
	}
	d := &st.decision
	if d.Usage == nil {
		d.Usage = &policy.Usage{}
	}
	d.Usage.Prefs = append(d.Usage.Prefs, h...)
}

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
