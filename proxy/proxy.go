// Package proxy is robotsproxy's HTTP(S) forward proxy: goproxy wiring that
// asks the policy about every request, refuses disallowed ones with 403
// before anything reaches the origin, forwards allowed ones unchanged, and
// writes one audit line per request.
package proxy

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Options configure a Proxy.
type Options struct {
	// Policy decides requests. Required.
	Policy *policy.Policy
	// Transport carries allowed requests to origins; see NewTransport. Its
	// DialContext also dials CONNECT tunnels. Required.
	Transport *http.Transport
	// Audit receives one JSON line per request.
	Audit zerolog.Logger
	// Metrics counts decisions; nil disables metrics.
	Metrics *Metrics
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Proxy is an http.Handler that serves proxy requests (absolute-form
// requests and CONNECT).
type Proxy struct {
	gp   *goproxy.ProxyHttpServer
	opts Options
}

// New returns a Proxy.
func New(o Options) *Proxy {
	if o.Now == nil {
		o.Now = time.Now
	}
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = o.Transport
	// Tunnels dial through Tr.DialContext (guarded), never HTTPS_PROXY.
	gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
	gp.KeepAcceptEncoding = true // forward requests unchanged
	gp.NonproxyHandler = http.HandlerFunc(nonProxy)
	p := &Proxy{gp: gp, opts: o}
	gp.OnRequest().DoFunc(p.onRequest)
	gp.OnRequest().HandleConnectFunc(p.onConnect)
	gp.OnResponse().DoFunc(p.onResponse)
	return p
}

// state is what the proxy learns about one request while serving it; it
// rides on the request context and on goproxy's ProxyCtx.UserData.
type state struct {
	start    time.Time
	decision *policy.Decision
	// status is set when the response bypasses the ResponseWriter
	// (CONNECT replies written on the hijacked connection).
	status int
	tunnel bool
}

type stateKey struct{}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	if st == nil {
		st = &state{}
	}
	return st
}

// ServeHTTP serves one proxy request and writes its audit line.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := &state{start: p.opts.Now()}
	cw := &countingWriter{ResponseWriter: w}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	p.gp.ServeHTTP(cw, r)
	p.audit(r, st, cw)
}

// onRequest decides a plain-HTTP proxy request (and, later, each request
// inside an intercepted tunnel).
func (p *Proxy) onRequest(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := stateFrom(req.Context())
	ctx.UserData = st
	host := req.URL.Host
	if host == "" {
		host = req.Host
	}
	d := p.opts.Policy.Decide(req.Context(), policy.Request{
		Scheme:    req.URL.Scheme,
		Host:      host,
		Path:      requestPath(req),
		UserAgent: req.Header.Get("User-Agent"),
	})
	st.decision = &d
	if !d.Allowed {
		return req, rejectResponse(req, &d)
	}
	return req, nil
}

// onConnect makes the host-level decision for a CONNECT tunnel: the crawler
// may open it when it may fetch "/" of the host over https.
func (p *Proxy) onConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	st := stateFrom(ctx.Req.Context())
	ctx.UserData = st
	st.tunnel = true
	d := p.opts.Policy.Decide(ctx.Req.Context(), policy.Request{
		Scheme:    connectScheme(host),
		Host:      host,
		Path:      "/",
		UserAgent: ctx.Req.Header.Get("User-Agent"),
	})
	st.decision = &d
	if !d.Allowed {
		ctx.Resp = rejectResponse(ctx.Req, &d)
		st.status = http.StatusForbidden
		return &goproxy.ConnectAction{Action: goproxy.ConnectReject}, host
	}
	st.status = http.StatusOK
	return &goproxy.ConnectAction{Action: goproxy.ConnectAccept}, host
}

// onResponse turns upstream failures into explicit responses: 403 when the
// dial-time guard refused the address, 502 otherwise.
func (p *Proxy) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	if resp != nil || ctx.Error == nil {
		return resp
	}
	return upstreamErrorResponse(ctx.Req, ctx.Error, stateFrom(ctx.Req.Context()))
}

// connectScheme is the scheme whose robots.txt governs a tunnel: http for
// port 80, https otherwise.
func connectScheme(host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port == "80" {
		return "http"
	}
	return "https"
}

// requestPath returns the request target's path and query exactly as the
// client sent them, so no decoding or re-encoding happens before RFC 9309
// normalisation.
func requestPath(req *http.Request) string {
	if req.RequestURI != "" {
		return robots.PathOf(req.RequestURI)
	}
	p := req.URL.EscapedPath()
	if req.URL.RawQuery != "" || req.URL.ForceQuery {
		p += "?" + req.URL.RawQuery
	}
	return p
}

// nonProxy answers requests that are not proxy requests.
func nonProxy(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "robotsproxy is a forward proxy: send absolute-form requests (set HTTP_PROXY/HTTPS_PROXY to this address)", http.StatusBadRequest)
}
