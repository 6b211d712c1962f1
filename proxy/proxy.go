// Package proxy is robotsproxy's HTTP(S) forward proxy: goproxy wiring that
// asks the policy about every request, refuses disallowed ones with 403
// before anything reaches the origin, forwards allowed ones unchanged, and
// writes one audit line per request. It decides nothing itself: every
// step, its own refusals included, is a policy.Decision made by package
// policy, which the proxy renders (the status, the X-Robotsproxy-* fields,
// the text, the audit line) and acts on.
package proxy

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/netip"
	"time"

	"github.com/elazarl/goproxy"
	"golang.org/x/net/http2"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Options configure a Proxy.
type Options struct {
	// Policy decides requests. Required.
	Policy *policy.Policy
	// Transport carries allowed requests to origins; see NewTransport. Its
	// DialContext also dials CONNECT tunnels. Required.
	Transport *http.Transport
	// Audit receives one JSON line per request, one Write per line. A
	// Write that returns an error means the line is not in the log: the
	// request is then refused or cut off, unless AuditContinue. When Audit
	// has a Failing() bool method (the server's audit writer does) that
	// reports true, new requests are answered 503 with reason
	// audit-unavailable and not forwarded, unless AuditContinue; when it
	// also has a Recover() error method, a new request first calls it, and
	// is served as usual when it returns nil (the log takes writes again:
	// the request's own line is written as any other).
	Audit io.Writer
	// AuditContinue answers requests as decided when their audit line
	// cannot be written (audit.on_write_error: continue); the writer
	// counts the lost lines. False (refuse) never forwards a request while
	// the audit log is failing and cuts off the connection of a request
	// whose line failed after it was forwarded.
	AuditContinue bool
	// Metrics counts decisions; nil disables metrics.
	Metrics *Metrics
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Intercept, when set, intercepts CONNECT tunnels (MITM): it returns
	// the TLS configuration that presents a certificate for host, signed by
	// the operator's CA (see package mitm). The proxy serves the tunnel
	// itself, over HTTP/1.1 or HTTP/2 (negotiated by ALPN), and each
	// request inside it is served like a plain-HTTP one (see tunnel.go).
	// Requests inside a tunnel take their context from the base context
	// of the http.Server that served the CONNECT (http.ServerContextKey;
	// its BaseContext is called with a nil net.Listener), so that a
	// shutdown that cancels it reaches them. Nil tunnels with a host-level
	// decision.
	Intercept func(host string, ctx *goproxy.ProxyCtx) (*tls.Config, error)
	// OnUntrusted, when set, is told of each intercepted tunnel whose
	// client ended the TLS handshake after the certificate the proxy
	// presented, as a client that does not trust the CA does (a TLS
	// alert unknown_ca, bad_certificate or certificate_unknown, RFC 8446
	// 6.2, or an end of the connection; see refusedCertificate): the
	// client's address, the CONNECT's host and the handshake error. The
	// client sees a TLS error, never the origin.
	OnUntrusted func(client netip.Addr, host string, err error)
	// AuthRealm is the realm of Proxy-Authenticate challenges; default
	// "robotsproxy".
	AuthRealm string
	// MaxFieldBytes bounds each free-text audit field, in octets of
	// encoded JSON; a longer value is cut and marked FIELD_truncated with
	// FIELD_length. Default auditlog.DefaultMaxFieldBytes; at most
	// auditlog.MaxFieldBytesLimit, so that a line stays under auditlog.MaxWrittenLineBytes.
	MaxFieldBytes int
	// MaxRequestTargetBytes bounds the request target (the URL as sent),
	// in octets: a longer one is answered 414 URI Too Long before goproxy
	// or any policy work. Default DefaultMaxRequestTargetBytes.
	MaxRequestTargetBytes int
	// MaxHeaderBytes bounds the request line and headers of a request
	// inside an intercepted tunnel, in octets, as http.Server.MaxHeaderBytes
	// bounds them outside (with the same 4096 octets of slack): a larger
	// one is answered 431 Request Header Fields Too Large (over HTTP/1.1,
	// which then ends the tunnel, by the tunnel's HTTP server; over
	// HTTP/2, counted as HTTP/1.1 would send them). Set it to the server's
	// MaxHeaderBytes. Default http.DefaultMaxHeaderBytes, the server's own
	// default.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds, inside an intercepted tunnel, the TLS
	// handshake and each HTTP/1.1 request's line and headers, as
	// http.Server.ReadHeaderTimeout does outside; over HTTP/2, a
	// connection silent that long is pinged, and closed when the ping is
	// not answered within as long again. Set it to the server's. 0 means
	// none.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds, inside an intercepted tunnel, the wait for the
	// first octet and for the next request (over HTTP/2, for a new stream
	// while none is open), as http.Server.IdleTimeout does outside: past
	// it the tunnel is closed. Set it to the server's. 0 means none.
	IdleTimeout time.Duration
	// H2MaxConcurrentStreams bounds the streams an HTTP/2 connection
	// inside an intercepted tunnel may have open at once (RFC 9113 6.5.2
	// SETTINGS_MAX_CONCURRENT_STREAMS). Default
	// DefaultH2MaxConcurrentStreams.
	H2MaxConcurrentStreams int
	// H2MaxResetsPerSecond bounds the streams a client resets (RST_STREAM)
	// on one HTTP/2 connection inside an intercepted tunnel, per second on
	// average with as many at once; past it the connection is closed
	// (GOAWAY ENHANCE_YOUR_CALM, counted h2_resets). Default
	// DefaultH2MaxResetsPerSecond.
	H2MaxResetsPerSecond int
	// BodyIdleTimeout bounds each wait for more of a request body: a
	// client that sends nothing for this long is cut off (408 Request
	// Timeout, cut_off "body-idle"). Default DefaultBodyIdleTimeout.
	BodyIdleTimeout time.Duration
	// BodyMinRate is the least average rate of a request body in octets
	// per second, counted after the first BodyIdleTimeout; a slower body
	// is cut off (408, cut_off "body-slow"). 0 means no minimum.
	BodyMinRate int
	// UnreachableRetry is how long an unreachable robots.txt result is
	// kept before the next fetch (cache.unreachable_retry): a 403 for
	// reason unreachable says when robots.txt is tried again. Zero says
	// nothing of it.
	UnreachableRetry time.Duration
	// Egress, when set, carries every forwarded request (plain, and
	// inside intercepted tunnels) in place of Transport: the robotsproxy
	// server's egress steps (signing, paying) around Transport. Each such
	// request carries in its context the identity it is sent for and a
	// record of what the steps did, which the audit line reports; a
	// request without it is not sent. Nil forwards through Transport
	// alone.
	Egress http.RoundTripper
	// Outbound, when set, carries forwarded requests in place of
	// Transport when there are no egress steps (Egress nil), as Transport
	// would: nothing added to the audit line. It is for a caller that
	// serves requests in process with its own transport (package
	// enforce); CONNECT tunnels still dial through Transport. Nil
	// forwards through Transport.
	Outbound http.RoundTripper
}

// Proxy is an http.Handler that serves proxy requests (absolute-form
// requests and CONNECT).
type Proxy struct {
	gp      *goproxy.ProxyHttpServer
	opts    Options
	flights flights    // handlers running, for shutdown
	denials *denials   // rendered robots.txt denials (see reject)
	frags   fragments  // rendered audit line fields (see auditfrag.go)
	live    livePolicy // the policy deciding new requests (SetPolicy)
	// failing reports whether the audit log is failing (Options.Audit's
	// Failing method); nil when it has none. recover tries to end the
	// failure (its Recover method); nil when it has none.
	failing func() bool
	recover func() error
	// h1 serves the HTTP/1.1 requests inside intercepted tunnels; h2,
	// with the settings of h2Base, the HTTP/2 ones (see tunnel.go).
	h1     *http.Server
	h2     *http2.Server
	h2Base *http.Server
}

// New returns a Proxy.
func New(o Options) *Proxy {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AuthRealm == "" {
		o.AuthRealm = "robotsproxy"
	}
	if o.MaxFieldBytes <= 0 {
		o.MaxFieldBytes = auditlog.DefaultMaxFieldBytes
	}
	o.MaxFieldBytes = min(o.MaxFieldBytes, auditlog.MaxFieldBytesLimit)
	if o.MaxRequestTargetBytes <= 0 {
		o.MaxRequestTargetBytes = DefaultMaxRequestTargetBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	if o.BodyIdleTimeout <= 0 {
		o.BodyIdleTimeout = DefaultBodyIdleTimeout
	}
	if o.H2MaxConcurrentStreams <= 0 {
		o.H2MaxConcurrentStreams = DefaultH2MaxConcurrentStreams
	}
	if o.H2MaxResetsPerSecond <= 0 {
		o.H2MaxResetsPerSecond = DefaultH2MaxResetsPerSecond
	}
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = o.Transport
	// Tunnels dial through Tr.DialContext (guarded), never HTTPS_PROXY.
	gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
	gp.KeepAcceptEncoding = true // forward requests unchanged
	gp.NonproxyHandler = http.HandlerFunc(nonProxy)
	if o.Audit == nil {
		o.Audit = io.Discard
	}
	p := &Proxy{gp: gp, opts: o, denials: memo.NewSync[denialKey, *rendered](denialsMax), frags: newFragments()}
	inner := http.HandlerFunc(p.serveInner)
	p.h1 = newH1Server(&p.opts, inner)
	p.h2, p.h2Base = newH2Server(&p.opts, inner, o.Metrics)
	if f, ok := o.Audit.(interface{ Failing() bool }); ok {
		p.failing = f.Failing
	}
	if r, ok := o.Audit.(interface{ Recover() error }); ok {
		p.recover = r.Recover
	}
	gp.OnRequest().DoFunc(p.onRequest)
	gp.OnRequest().HandleConnectFunc(p.onConnect)
	gp.OnResponse().DoFunc(p.onResponse)
	return p
}

// state is what the proxy learns about one request while serving it; it
// rides on goproxy's ProxyCtx.UserData (onRequest and onConnect find it
// through the flights registry: see exchange).
type state struct {
	start time.Time
	// decision is the request's decision, valid when decided is set. It is
	// kept here, by value, so that deciding allocates nothing.
	decision policy.Decision
	// pin is the pinned identity of the client, shared by every request
	// inside an intercepted tunnel.
	pin policy.Pin
	// parent is the CONNECT's state for a request inside an intercepted
	// tunnel, nil otherwise.
	parent *state
	// authority is the canonical authority of an intercepted tunnel.
	authority string
	// line writes the request's one audit line.
	line requestAudit
	// target is the request target as the client sent it (see
	// requestURL), taken before goproxy clears RequestURI; inside an
	// intercepted tunnel, the URL made absolute.
	target string
	// w is the client's writer (see reject), nil for a state goproxy made.
	w *countingWriter
	// ticket is politeness's answer for a request to be forwarded
	// (policy.Policy.Admit; released with the audit line), nil when none
	// was asked.
	ticket policy.Ticket
	// egress is what the egress steps did to a forwarded request, nil
	// when there are none (Options.Egress) or it was not forwarded.
	egress *egress.Exchange
	// client is the client's address once clientParsed (see clientAddr).
	client       netip.Addr
	clientParsed bool
	decided      bool // next to clientParsed: the exchange stays in its size class
	// cutOff is the audit line's cut_off field (a byte next to the
	// flags, not a string: the exchange keeps its size class).
	cutOff cutOffCode
	// tunnel is set for a CONNECT that was let through, intercepted when
	// it is intercepted: the line's tunnel field (see tunnelMode).
	tunnel, intercepted bool
	// status is set when the response bypasses the ResponseWriter
	// (CONNECT replies written on the hijacked connection). An int16 next
	// to the flags (a status has three digits): the exchange keeps its
	// size class.
	status int16
}

// tunnelMode is the CONNECT line's tunnel field: auditlog.TunnelHostLevel
// or auditlog.TunnelIntercepted, "" for any other request.
func (st *state) tunnelMode() string {
	switch {
	case !st.tunnel:
		return ""
	case st.intercepted:
		return auditlog.TunnelIntercepted
	}
	return auditlog.TunnelHostLevel
}

// clientAddr returns the client's address (the zero Addr when
// req.RemoteAddr is not an address and port), parsed once per request.
func (st *state) clientAddr(req *http.Request) netip.Addr {
	if !st.clientParsed {
		if ap, err := netip.ParseAddrPort(req.RemoteAddr); err == nil {
			st.client = ap.Addr()
		}
		st.clientParsed = true
	}
	return st.client
}

// identityRequest is what the policy reads of req to identify its crawler
// (its User-Agent and the pinned identity), for a decision made before
// the request is read further.
func (st *state) identityRequest(req *http.Request) policy.Request {
	return policy.Request{UserAgent: req.Header.Get("User-Agent"), Pin: st.pin}
}

// decide records d as the request's decision and returns it.
func (st *state) decide(d policy.Decision) *policy.Decision {
	st.decision, st.decided = d, true
	return &st.decision
}

// ServeHTTP serves one proxy request and writes its audit line. While the
// audit log is failing, and writing to it again fails too (see refusing;
// AuditContinue off), a request is answered 503 audit-unavailable and not
// forwarded; a request target over
// MaxRequestTargetBytes is answered 414 first; a request body is read
// with BodyIdleTimeout. A request whose line could not be written is cut
// off (http.ErrAbortHandler) rather than completed, unless AuditContinue.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.serve(w, r, nil)
}

// serve is ServeHTTP for a request read outside any tunnel (parent nil),
// or inside the intercepted tunnel whose CONNECT's state is parent (see
// serveInner).
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, parent *state) {
	x := p.begin(w, r, p.opts.Now(), parent)
	defer p.end(r, x)
	if p.refusing() {
		p.refuseAudit(r, x)
		return
	}
	if p.refuseTarget(w, r, x) {
		if p.cutsLost(&x.st) {
			panic(http.ErrAbortHandler) // the 414 is still buffered: not sent
		}
		return
	}
	r, body := p.watchBody(w, r) // a copy when watched: the server keeps its own body
	p.flights.rekey(x, r)        // the request goproxy hands to onRequest
	p.gp.ServeHTTP(&x.w, r)
	body.finish()
	status := x.w.status
	if status == 0 {
		status = int(x.st.status)
	}
	x.st.cutOff = cutOffOf(cutOff(r, body))
	_ = p.auditOnce(r, &x.st, status, x.w.bytes) // end gives back the politeness slot
	if p.cutsLost(&x.st) {
		// No answer without its line: what net/http still holds (the
		// answer's end) is not sent, and the connection is closed.
		panic(http.ErrAbortHandler)
	}
}

// refuseAudit answers 503 audit-unavailable to a request that arrives
// while the audit log is failing: it is not forwarded. Its line is
// written first (space may have come back since refusing tried).
func (p *Proxy) refuseAudit(r *http.Request, x *exchange) {
	resp := p.auditUnavailable(r, &x.st)
	_ = p.auditOnce(r, &x.st, resp.StatusCode, resp.ContentLength)
	renderResponse(resp).write(&x.w)
}

// onRequest decides a plain-HTTP proxy request, or a request inside an
// intercepted tunnel (its state's parent is then the CONNECT's).
func (p *Proxy) onRequest(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := p.stateOf(req)
	ctx.UserData = st
	if st.parent == nil && p.authenticate(req, st) != nil {
		return req, p.reject(req, st, &st.decision)
	}
	if resp := p.refuseHeader(req, st); resp != nil { // 431 over HTTP/2, see tunnel.go
		return req, resp
	}
	host := req.URL.Host
	if host == "" {
		host = req.Host
	}
	r := policy.Request{
		Scheme:    req.URL.Scheme,
		Host:      host,
		Path:      policy.HTTPRequestPath(req),
		UserAgent: req.Header.Get("User-Agent"),
		Pin:       st.pin,
	}
	if st.parent != nil {
		r.Tunnel = st.parent.authority
	}
	d := st.decide(p.policy().Decide(req.Context(), r))
	if !d.Allowed && !d.ReportOnly {
		return req, p.reject(req, st, d)
	}
	if resp := p.admit(req, st); resp != nil { // politeness
		return req, resp
	}
	// Allowed, or denied in report mode: forwarded as sent, with no sign
	// of robotsproxy, so a watched crawler cannot tell.
	prepareOutbound(req) // RFC 9110 7.6.1: hop-by-hop fields stay here
	req = p.toEgress(req, ctx, st)
	req = traceSend(req, &st.ticket) // a crawl-delay turn counts from the send
	return req, nil
}

// authenticate resolves the request's pinned identity into st, or records
// and returns the denial (407) when proxy authentication fails.
func (p *Proxy) authenticate(req *http.Request, st *state) *policy.Decision {
	pin, d := p.policy().Authenticate(req.Context(), req.Header.Get("Proxy-Authorization"), st.clientAddr(req))
	st.pin = pin
	if d == nil {
		return nil
	}
	return st.decide(*d)
}

// onConnect decides a CONNECT request. With interception the tunnel is
// opened (after the CONNECT checks) and every request inside it is decided
// in onRequest; without, the decision is host-level.
func (p *Proxy) onConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	st := p.stateOf(ctx.Req)
	ctx.UserData = st
	r := policy.Request{Host: host, UserAgent: ctx.Req.Header.Get("User-Agent")}
	if st.parent != nil { // inside a tunnel: its pin, and no tunnel in it (DecideConnect)
		r.Tunnel = st.parent.authority
	} else if d := p.authenticate(ctx.Req, st); d != nil {
		return p.rejectConnect(ctx, st, d), host
	}
	r.Pin = st.pin
	intercept := p.opts.Intercept != nil
	d := st.decide(p.policy().DecideConnect(ctx.Req.Context(), r, intercept))
	if !d.Allowed && !d.ReportOnly {
		return p.rejectConnect(ctx, st, d), host
	}
	st.status = http.StatusOK
	// Dial exactly the authority that was decided: canonical, with its
	// explicit port (goproxy would add ":80" to a target without one).
	_, authority, err := policy.ConnectAuthority(host)
	if err != nil { // DecideConnect allowed it, so this cannot happen; fail closed
		policy.DecideBadTarget(d, err)
		return p.rejectConnect(ctx, st, d), host
	}
	if !intercept {
		st.tunnel = true
		return &goproxy.ConnectAction{Action: goproxy.ConnectAccept}, authority
	}
	st.tunnel, st.intercepted = true, true
	st.authority = authority
	return p.interceptAction(st, st.clientAddr(ctx.Req)), authority
}

// rejectConnect answers a CONNECT with the denial (403, or 407).
//
// goproxy writes the answer on the hijacked connection after this returns,
// before ServeHTTP gets control back, so the audit line is written here
// first: no client sees an answer whose line is not yet written.
func (p *Proxy) rejectConnect(ctx *goproxy.ProxyCtx, st *state, d *policy.Decision) *goproxy.ConnectAction {
	ctx.Resp = rejectWith(ctx.Req, d, p.opts.AuthRealm, p.opts.UnreachableRetry)
	st.status = int16(ctx.Resp.StatusCode)
	// Abandon may be writing this request's line.
	if p.auditOnce(ctx.Req, st, int(st.status), ctx.Resp.ContentLength) != nil && !p.opts.AuditContinue {
		ctx.Resp = p.auditUnavailable(ctx.Req, st) // no refusal without its line either
		st.status = int16(ctx.Resp.StatusCode)
	}
	return &goproxy.ConnectAction{Action: goproxy.ConnectReject}
}

// onResponse turns upstream failures into explicit responses: 403 when the
// dial-time guard refused the address, 502 otherwise, and 502 for a
// protocol switch that is not a WebSocket handshake (see switch.go).
func (p *Proxy) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	p.observeOrigin(resp, ctx) // back-off, Content-Usage
	st, _ := ctx.UserData.(*state)
	if st == nil {
		st = p.stateOf(ctx.Req)
	}
	if resp != nil && forwarded(st) {
		resp = refuseSwitch(ctx.Req, resp, st)
		// The origin's response: RFC 9110 7.6.1, towards the client too.
		// Our own answers keep their Connection: close.
		prepareInbound(resp)
	}
	if resp == nil && ctx.Error != nil {
		resp = upstreamErrorResponse(ctx.Req, ctx.Error, st)
	}
	return resp
}

// forwarded reports whether the request was sent to the origin, so that
// the response is the origin's (and not a refusal of ours, whose 407
// challenge must reach the client).
func forwarded(st *state) bool {
	return st != nil && st.decided && (st.decision.Allowed || st.decision.ReportOnly)
}

// nonProxy answers requests that are not proxy requests.
func nonProxy(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "robotsproxy is a forward proxy: send absolute-form requests (set HTTP_PROXY/HTTPS_PROXY to this address)", http.StatusBadRequest)
}
