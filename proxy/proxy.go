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
	// Write that returns an error means the line is not in the log (see
	// audit.Writer): the request is then refused or cut off, unless
	// AuditContinue. When Audit has a Failing() bool method (audit.Writer
	// does) that reports true, new requests are answered 503 with reason
	// audit-unavailable and not forwarded, unless AuditContinue; when it
	// also has a Recover() error method (audit.Writer does), a new request
	// first calls it, and is served as usual when it returns nil (the log
	// takes writes again: the request's own line is written as any other).
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
	// the operator's CA (see package mitm). Each request inside the tunnel
	// is then decided like a plain-HTTP one. Nil tunnels with a host-level
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
	// one is answered 431 Request Header Fields Too Large and ends the
	// tunnel. Set it to the server's MaxHeaderBytes. Default
	// http.DefaultMaxHeaderBytes, the server's own default.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds, inside an intercepted tunnel, the time from
	// a request's first octet to the end of its headers, as
	// http.Server.ReadHeaderTimeout does outside: past it the tunnel is
	// closed and the request audited client-timeout. Set it to the
	// server's. 0 means none.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds, inside an intercepted tunnel, the wait for the
	// next request, as http.Server.IdleTimeout does outside: past it the
	// tunnel is closed. Set it to the server's. 0 means none.
	IdleTimeout time.Duration
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
	live    livePolicy // the policy deciding new requests (SetPolicy)
	// failing reports whether the audit log is failing (Options.Audit's
	// Failing method); nil when it has none. recover tries to end the
	// failure (its Recover method); nil when it has none.
	failing func() bool
	recover func() error
	// handshakes is goproxy's logger, which reports the intercepted
	// tunnels whose client does not trust the CA (Options.OnUntrusted).
	handshakes *goproxyLog
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
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = o.Transport
	// Tunnels dial through Tr.DialContext (guarded), never HTTPS_PROXY.
	gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
	gp.KeepAcceptEncoding = true // forward requests unchanged
	gp.NonproxyHandler = http.HandlerFunc(nonProxy)
	hs := &goproxyLog{next: gp.Logger, untrusted: o.OnUntrusted}
	gp.Logger = hs
	if o.Audit == nil {
		o.Audit = io.Discard
	}
	p := &Proxy{gp: gp, opts: o, handshakes: hs, denials: memo.NewSync[denialKey, *rendered](denialsMax)}
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
	// conn is an intercepted tunnel's client connection, under goproxy's
	// TLS layer (see tunnelConn); nil until goproxy hijacks it.
	conn *tunnelConn
	// line writes the request's one audit line.
	line requestAudit
	// target is the request target as the client sent it (see
	// requestURL), taken before goproxy clears RequestURI; "" inside an
	// intercepted tunnel.
	target string
	// w is the client's writer of a plain request or CONNECT (see
	// reject), nil inside an intercepted tunnel.
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
	x := p.begin(w, r, p.opts.Now())
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
// intercepted tunnel (then ctx.UserData is the CONNECT's state).
func (p *Proxy) onRequest(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	var st *state
	if parent, ok := ctx.UserData.(*state); ok && parent.authority != "" {
		st = &state{start: p.opts.Now(), parent: parent, pin: parent.pin}
	} else if st = p.stateOf(req); p.authenticate(req, st) != nil {
		ctx.UserData = st
		return req, p.reject(req, st, &st.decision)
	}
	ctx.UserData = st
	if st.parent != nil {
		st.parent.conn.headerRead(hasBody(req))
		if resp := p.refuseHeader(req, st); resp != nil { // 431, see tunnel.go
			return req, resp
		}
		if p.refusing() { // the tunnel's request: see ServeHTTP
			return req, p.auditUnavailable(req, st)
		}
	}
	if st.parent != nil && len(req.RequestURI) > p.opts.MaxRequestTargetBytes {
		// goproxy reads the requests inside a tunnel itself: the server's
		// limit (refuseTarget) never saw this one. 414, before any work on
		// the target.
		p.opts.Metrics.CountClientRefusal(CauseURITooLong)
		d := st.decide(p.policy().DecideTargetTooLong(st.identityRequest(req), len(req.RequestURI), p.opts.MaxRequestTargetBytes))
		return req, p.reject(req, st, d)
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
	if st.parent != nil && st.parent.conn != nil && hasBody(req) {
		// The body limits, on the client's connection under the TLS layer
		// (there is no ResponseController inside a tunnel).
		b := p.newIdleBody(req.Body, st.parent.conn)
		b.tunnel = st.parent.conn
		req.Body = b
	}
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
	if d := p.authenticate(ctx.Req, st); d != nil {
		return p.rejectConnect(ctx, st, d), host
	}
	intercept := p.opts.Intercept != nil
	d := st.decide(p.policy().DecideConnect(ctx.Req.Context(), policy.Request{
		Host:      host,
		UserAgent: ctx.Req.Header.Get("User-Agent"),
		Pin:       st.pin,
	}, intercept))
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
	ctx.RoundTripper = goproxy.RoundTripperFunc(p.roundTripInner)
	return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: p.tlsConfig(st.clientAddr(ctx.Req))}, authority
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
// dial-time guard refused the address, 502 otherwise. Inside an intercepted
// tunnel it also writes the request's audit line.
func (p *Proxy) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	p.observeOrigin(resp, ctx) // back-off, Content-Usage
	st, _ := ctx.UserData.(*state)
	if resp != nil && forwarded(st) && st.parent == nil {
		// The origin's response (inside a tunnel roundTripInner cleaned
		// it): RFC 9110 7.6.1, towards the client too. Our own answers
		// below keep their Connection: close.
		prepareInbound(resp)
	}
	if resp == nil && ctx.Error != nil {
		if st == nil {
			st = p.stateOf(ctx.Req)
		}
		resp = upstreamErrorResponse(ctx.Req, ctx.Error, st)
	}
	if st != nil && st.parent != nil && resp != nil {
		p.afterInner(ctx.Req, st, resp)
		if ab, ok := resp.Body.(*auditBody); ok {
			ab.status = resp.StatusCode // written when the body is closed
		} else {
			p.finishInner(ctx.Req, st, resp.StatusCode, resp.ContentLength)
			if p.cutsLost(st) { // not yet sent: no answer without its line
				resp = p.auditUnavailable(ctx.Req, st)
			}
		}
	}
	return resp
}

// afterInner tells an intercepted tunnel's connection how a request inside
// it ended before its answer is written: a body not read to its end (the
// request was refused, cut off, or answered early) ends the tunnel, as the
// server closes a connection after a body it did not read; a protocol
// switch (101) stops the counting of header octets.
func (p *Proxy) afterInner(req *http.Request, st *state, resp *http.Response) {
	conn := st.parent.conn
	if resp.StatusCode == http.StatusSwitchingProtocols {
		conn.switched()
		return
	}
	if b := bodyOf(req); hasBody(req) && (b == nil || !b.eof.Load()) {
		conn.end()
	}
}

// forwarded reports whether the request was sent to the origin, so that
// the response is the origin's (and not a refusal of ours, whose 407
// challenge must reach the client).
func forwarded(st *state) bool {
	return st != nil && st.decided && (st.decision.Allowed || st.decision.ReportOnly)
}

// roundTripInner carries a request from inside an intercepted tunnel to the
// origin (TLS verified against the system roots by the transport). An error
// becomes a 502 (or 403) response instead of a dropped connection, and the
// response body is wrapped so the audit line is written, with the byte
// count, before goproxy sends the body's last octets (see auditBody).
func (p *Proxy) roundTripInner(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Response, error) {
	st, _ := ctx.UserData.(*state)
	if st == nil {
		st = &state{start: p.opts.Now()}
	}
	var resp *http.Response
	err := errNoExchange
	if p.opts.Egress == nil || egress.Of(req) != nil { // else toEgress did not run: fail closed
		resp, err = p.outbound().RoundTrip(req)
	}
	if err != nil {
		st.cutOff = cutOffOf(cutOff(req, bodyOf(req))) // a body cut off: 408
		return upstreamErrorResponse(req, err, st), nil
	}
	prepareInbound(resp) // RFC 9110 7.6.1: the origin's, towards the client
	// A switched protocol's body is the origin's connection, which goproxy
	// needs whole (an io.ReadWriter) to carry the new protocol.
	if resp.Body != nil && resp.Body != http.NoBody && resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body = &auditBody{ReadCloser: resp.Body, length: resp.ContentLength, p: p, req: req, st: st}
	}
	return resp, nil
}

// nonProxy answers requests that are not proxy requests.
func nonProxy(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "robotsproxy is a forward proxy: send absolute-form requests (set HTTP_PROXY/HTTPS_PROXY to this address)", http.StatusBadRequest)
}
