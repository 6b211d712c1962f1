package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/rules"
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
	// CauseH2Resets: an HTTP/2 connection inside an intercepted tunnel
	// reset streams faster than h2_max_resets_per_second, or queued more
	// than four times h2_max_concurrent_streams of them: it was closed
	// (GOAWAY ENHANCE_YOUR_CALM; no audit line: no request was answered).
	CauseH2Resets RefusalCause = "h2_resets"
)

// refusalCauses are pre-set to 0 so that every cause is exported.
var refusalCauses = []RefusalCause{CauseMaxConnections, CauseHeaderTimeout, CauseBodyIdle,
	CauseIdleTimeout, CauseHeaderTooLarge, CauseURITooLong, CauseMalformed, CauseH2Resets}

// Client limit defaults, used when the Options field is 0 (the defaults
// of client.max_request_target_bytes and client.body_idle_timeout).
const (
	DefaultMaxRequestTargetBytes = rules.DefaultMaxRequestTargetBytes
	DefaultBodyIdleTimeout       = rules.DefaultBodyIdleTimeout
)

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
	setDenyFields(h, auditlog.ReasonURITooLong)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusRequestURITooLong)
	n, _ := io.WriteString(w, body)
	_ = x.st.line.write(func(*lineSink) error { // answered already: the writer counts a lost line
		return p.AuditRefusal(Refusal{Client: r.RemoteAddr, Method: r.Method, Target: x.flight.url,
			UserAgent: r.Header.Get("User-Agent"), Status: http.StatusRequestURITooLong, Bytes: int64(n),
			Reason: auditlog.ReasonURITooLong, Cause: CauseURITooLong, Start: x.flight.start,
			Protocol: protocol(r), Intercepted: x.st.parent != nil})
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
