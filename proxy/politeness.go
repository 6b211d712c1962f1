package proxy

import (
	"context"
	"errors"
	"net/http"

	"github.com/robotsproxy/robotsproxy/policy"
)

// admit holds a request that is to be forwarded until the policy's
// politeness step lets it start (policy.Policy.Admit), keeping its ticket
// in st, or returns its refusal: 429 with Retry-After, reason crawl-delay,
// backoff or host-concurrency (or the 503 of a shutdown that cut the wait
// short, policy.DecideShutdown).
func (p *Proxy) admit(req *http.Request, st *state) *http.Response {
	d := &st.decision
	var ok bool
	if st.ticket, ok = p.policy().Admit(req.Context(), d); ok {
		return nil
	}
	if errors.Is(context.Cause(req.Context()), ErrShutdown) {
		policy.DecideShutdown(d)
		return cutOffResponse(req)
	}
	return rejectResponse(req, d, p.opts.AuthRealm)
}

// release gives back the politeness ticket of the request, if any: its
// in-flight slot and its turn.
func (st *state) release() {
	if st.ticket != nil {
		st.ticket.Release()
	}
}
