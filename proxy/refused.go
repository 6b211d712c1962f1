package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/policy"
)

// RefusalCause labels robotsproxy_client_refusals_total: why a client
// connection or request was refused or closed by a client limit.
type RefusalCause string

// Refusal causes. Each names the limit (config key under client.) that
// refused the client.
const (
	// CauseMaxConnections: max_connections was reached; counted each time
	// the proxy stops accepting, not per waiting client.
	CauseMaxConnections RefusalCause = "max_connections"
	// CauseHeaderTimeout: read_header_timeout expired before a complete
	// request line and headers.
	CauseHeaderTimeout RefusalCause = "header_timeout"
	// CauseBodyIdle: body_idle_timeout expired while reading a request body.
	CauseBodyIdle RefusalCause = "body_idle"
	// CauseIdleTimeout: a keep-alive connection had no new request for
	// idle_timeout (no audit line: there was no request).
	CauseIdleTimeout RefusalCause = "idle_timeout"
	// CauseHeaderTooLarge: max_header_bytes was exceeded (HTTP 431).
	CauseHeaderTooLarge RefusalCause = "header_too_large"
	// CauseURITooLong: max_request_target_bytes was exceeded (HTTP 414).
	CauseURITooLong RefusalCause = "uri_too_long"
	// CauseMalformed: the HTTP server could not parse the request (HTTP
	// 400, 417, 501, 505).
	CauseMalformed RefusalCause = "malformed"
)

// refusalCauses are pre-set to 0 so that every cause is exported.
var refusalCauses = []RefusalCause{CauseMaxConnections, CauseHeaderTimeout, CauseBodyIdle,
	CauseIdleTimeout, CauseHeaderTooLarge, CauseURITooLong, CauseMalformed}

// Client limit defaults, used when the Options field is 0 (the defaults
// of client.max_request_target_bytes and client.body_idle_timeout).
const (
	DefaultMaxRequestTargetBytes = rules.DefaultMaxRequestTargetBytes
	DefaultBodyIdleTimeout       = rules.DefaultBodyIdleTimeout
)

// Refusal is a request refused before the proxy could decide it: by the
// HTTP server itself (431, 400, 501, ...), by a client timeout, by the
// request target limit (414), or cut off by shutdown before its handler
// returned. AuditRefusal turns it into the request's one audit line.
type Refusal struct {
	// Client is the client's address, host:port.
	Client string
	// Method, Target and UserAgent are what the client sent, "" when they
	// could not be recovered.
	Method, Target, UserAgent string
	// TargetCut reports that Target is only the start of the target (the
	// rest was never read or not kept); the line marks url_truncated.
	TargetCut bool
	// Status is the status sent to the client, 0 when none was.
	Status int
	// Bytes is the response body size sent, in octets.
	Bytes int64
	// Reason is the audit line's reason.
	Reason policy.Reason
	// Cause labels robotsproxy_client_refusals_total; "" counts nothing
	// there.
	Cause RefusalCause
	// CutOff is the cut_off field, "" for none.
	CutOff string
	// Start is when the request's first octet arrived; zero means now.
	Start time.Time
	// Err is what went wrong, if known.
	Err error
}

// AuditRefusal writes the audit line of a refused request, with the same
// field names and bounds as every other line (decision "deny"), and counts
// it in robotsproxy_requests_total and, when r.Cause is set, in
// robotsproxy_client_refusals_total. It returns the line's write error:
// the line is then not in the log (the audit writer counts it). It is
// safe for concurrent use.
func (p *Proxy) AuditRefusal(r Refusal) error {
	if r.Cause != "" {
		p.opts.Metrics.CountClientRefusal(r.Cause)
	}
	p.opts.Metrics.countRequest(auditlog.DecisionDeny, string(r.Reason), true)
	now := p.opts.Now()
	if r.Start.IsZero() {
		r.Start = now
	}
	f := fieldWriter{max: p.opts.MaxFieldBytes}
	sink := &lineSink{}
	e := p.lineHead(sink, f, r.Client, r.Method, r.Target, r.TargetCut, r.UserAgent, auditlog.DecisionDeny, string(r.Reason))
	if r.CutOff != "" {
		e = e.Str(auditlog.FieldCutOff, r.CutOff)
	}
	if r.Err != nil {
		e = f.str(e, auditlog.FieldError, r.Err.Error())
	}
	return lineEnd(sink, e, r.Status, r.Bytes, r.Start, now)
}

// refuseTarget answers 414 URI Too Long, before goproxy or any policy
// work, when the request target is longer than MaxRequestTargetBytes, and
// writes the request's audit line. It reports whether it did.
func (p *Proxy) refuseTarget(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	limit := p.opts.MaxRequestTargetBytes
	if len(r.RequestURI) <= limit {
		return false
	}
	body := fmt.Sprintf("robotsproxy: the request target is %d octets, longer than the limit of %d (client.max_request_target_bytes)\n",
		len(r.RequestURI), limit)
	h := w.Header()
	setDenyFields(h, policy.ReasonURITooLong)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusRequestURITooLong)
	n, _ := io.WriteString(w, body)
	_ = x.st.line.write(func(*lineSink) error { // answered already: the writer counts a lost line
		return p.AuditRefusal(Refusal{Client: r.RemoteAddr, Method: r.Method, Target: r.RequestURI,
			UserAgent: r.Header.Get("User-Agent"), Status: http.StatusRequestURITooLong, Bytes: int64(n),
			Reason: policy.ReasonURITooLong, Cause: CauseURITooLong, Start: x.flight.start})
	})
	return true
}

// ConnObserver watches one client connection for the server (see package
// server): the proxy calls Serving when its handler starts on a request read
// from that connection and Served when the handler returns, so that what
// the HTTP server writes on the connection with no handler running can be
// told apart (a refusal of its own: 400, 431, 501, ...).
type ConnObserver interface {
	Serving()
	Served()
}

type connObserverKey struct{}

// WithConnObserver returns ctx carrying o, for http.Server.ConnContext.
func WithConnObserver(ctx context.Context, o ConnObserver) context.Context {
	return context.WithValue(ctx, connObserverKey{}, o)
}

func connObserver(ctx context.Context) ConnObserver {
	o, _ := ctx.Value(connObserverKey{}).(ConnObserver)
	return o
}

// clientMetrics count client connections and their refusals.
type clientMetrics struct {
	refusals *prometheus.CounterVec
	conns    prometheus.Gauge
}

func newClientMetrics(reg prometheus.Registerer) clientMetrics {
	c := clientMetrics{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_client_refusals_total",
			Help: "Client connections or requests refused or closed by a client limit, by cause.",
		}, []string{"cause"}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_client_connections",
			Help: "Client connections open (accepted and not yet closed, tunnels included).",
		}),
	}
	for _, cause := range refusalCauses {
		c.refusals.WithLabelValues(string(cause))
	}
	reg.MustRegister(c.refusals, c.conns)
	return c
}

// CountClientRefusal counts one refusal in
// robotsproxy_client_refusals_total{cause}.
func (m *Metrics) CountClientRefusal(cause RefusalCause) {
	if m == nil {
		return
	}
	m.client.refusals.WithLabelValues(string(cause)).Inc()
}

// AddClientConns adds delta (+1 on accept, -1 on close) to
// robotsproxy_client_connections.
func (m *Metrics) AddClientConns(delta int) {
	if m == nil {
		return
	}
	m.client.conns.Add(float64(delta))
}
