package proxy

import (
	"errors"
	"net/http"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/policy"
)

// outbound is what carries a forwarded request to its origin: the egress
// steps when there are any (Options.Egress), else Options.Outbound when
// set, else the transport.
func (p *Proxy) outbound() http.RoundTripper {
	if p.opts.Egress != nil {
		return p.opts.Egress
	}
	if p.opts.Outbound != nil {
		return p.opts.Outbound
	}
	return p.opts.Transport
}

// toEgress hands a request about to be forwarded to the egress steps, when
// there are any (else to Options.Outbound, when set): it returns req with an egress.Exchange for the decided
// identity in its context (kept in st for the audit line), and routes
// the request through Options.Egress. Without egress steps it returns req
// unchanged.
func (p *Proxy) toEgress(req *http.Request, ctx *goproxy.ProxyCtx, st *state) *http.Request {
	if p.opts.Egress == nil {
		if p.opts.Outbound != nil {
			ctx.RoundTripper = goproxy.RoundTripperFunc(p.roundTripOutbound)
		}
		return req
	}
	d := &st.decision
	id := egress.Identity{Token: d.Identity.Token, User: d.Identity.User, Client: st.clientAddr(req)}
	if st.pin.Source == policy.SourceClientRange {
		id.Range, _ = p.policy().ClientRange(id.Client)
	}
	// A request denied and forwarded only because the mode is report
	// (RFC 9309 enforcement opted out for watching) is neither signed nor
	// paid for: the operator's key and money vouch only for what
	// robots.txt, usage preferences and licenses let through.
	st.egress = &egress.Exchange{Identity: id, ReportOnly: !d.Allowed}
	// Only robotsproxy agrees to a price: a client's price field would be
	// signed with the operator's key, and billed to its crawler.
	payments.RemovePriceFields(req.Header)
	req = req.WithContext(egress.NewContext(req.Context(), st.egress))
	ctx.RoundTripper = goproxy.RoundTripperFunc(p.roundTripEgress)
	return req
}

// roundTripEgress carries a request through the egress steps.
func (p *Proxy) roundTripEgress(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
	if egress.Of(req) == nil { // toEgress did not run: fail closed
		return nil, errNoExchange
	}
	return p.opts.Egress.RoundTrip(req)
}

// roundTripOutbound carries a request through Options.Outbound.
func (p *Proxy) roundTripOutbound(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
	return p.opts.Outbound.RoundTrip(req)
}

// errNoExchange: a request reached the egress steps without the exchange
// that says who it is sent for and whether it may be signed and paid.
var errNoExchange = errors.New("egress: a forwarded request without its decision (not sent)")
