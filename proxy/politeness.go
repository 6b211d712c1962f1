package proxy

import (
	"context"
	"errors"
	"net/http"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// admit holds a request that is to be forwarded until politeness lets it
// start (Options.Politeness), or returns its refusal: 429 with
// Retry-After, reason crawl-delay, backoff or host-concurrency (or the 503
// of a shutdown that cut the wait short). What the answer means for the
// decision is policy.DecideAdmission's.
func (p *Proxy) admit(req *http.Request, st *state) *http.Response {
	l := p.opts.Politeness
	if l == nil {
		return nil
	}
	d := &st.decision
	st.ticket = l.Admit(req.Context(), d.PolitenessRequest())
	if policy.DecideAdmission(d, st.ticket) {
		return nil
	}
	if errors.Is(context.Cause(req.Context()), ErrShutdown) {
		d.Reason = auditlog.ReasonShutdown
		return cutOffResponse(req)
	}
	return rejectResponse(req, d, p.opts.AuthRealm)
}
