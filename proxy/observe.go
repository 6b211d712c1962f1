package proxy

import (
	"net/http"

	"github.com/elazarl/goproxy"
)

// observeOrigin has the policy observe the origin's answer to a forwarded
// request (policy.Policy.Observe: politeness's back-off, or the success
// that ends one; Content-Usage; a Link naming a license). resp is the
// origin's response; responses the proxy made itself are left alone.
func (p *Proxy) observeOrigin(resp *http.Response, ctx *goproxy.ProxyCtx) {
	st, _ := ctx.UserData.(*state)
	if st == nil || resp == nil || ctx.Error != nil || !forwarded(st) {
		return
	}
	p.policy().Observe(ctx.Req.Context(), &st.decision, st.ticket, ctx.Req, resp)
}
