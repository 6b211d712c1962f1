package proxy

import (
	"crypto/tls"
	"net/http"

	"golang.org/x/net/http2"
	"golang.org/x/time/rate"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// HTTP/2 bound defaults, used when the Options field is 0 (the defaults
// of client.h2_max_concurrent_streams and client.h2_max_resets_per_second).
const (
	DefaultH2MaxConcurrentStreams = rules.DefaultH2MaxConcurrentStreams
	DefaultH2MaxResetsPerSecond   = rules.DefaultH2MaxResetsPerSecond
)

// newH2Server returns the HTTP/2 server of intercepted tunnels
// (golang.org/x/net/http2) and the http.Server it takes its settings and
// handler from (http2.ServeConnOpts.BaseConfig). Each connection is
// bounded: at most H2MaxConcurrentStreams streams open at once (RFC 9113
// 5.1.2; the server also runs no more handlers than that, and ends a
// connection that queues four times as many: golang.org/x/net's own
// rapid-reset defence); a header list of at most twice MaxHeaderBytes
// and its slack (RFC 9113 6.5.2 SETTINGS_MAX_HEADER_LIST_SIZE; past
// MaxHeaderBytes, refuseHeader answers 431 with the request's line); closed
// with GOAWAY after IdleTimeout without a stream; pinged after
// ReadHeaderTimeout without a frame from the client, and closed when the
// ping is not answered within ReadHeaderTimeout; and at most
// H2MaxResetsPerSecond resets (h2Conn).
func newH2Server(o *Options, h http.Handler, m *Metrics) (*http2.Server, *http.Server) {
	srv := &http2.Server{IdleTimeout: o.IdleTimeout}
	base := &http.Server{
		Handler:        h,
		MaxHeaderBytes: 2 * (o.MaxHeaderBytes + headerSlack),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: o.H2MaxConcurrentStreams,
			SendPingTimeout:      o.ReadHeaderTimeout,
			PingTimeout:          o.ReadHeaderTimeout,
			CountError: func(errType string) {
				if errType == "too_many_early_resets" { // the server's own rapid-reset defence
					m.CountClientRefusal(CauseH2Resets)
				}
			},
		},
	}
	return srv, base
}

// serveH2 serves an intercepted tunnel's TLS connection, which
// negotiated h2, until it ends.
func (p *Proxy) serveH2(tc *tls.Conn, t *tunnel) {
	c := &h2Conn{Conn: tc, p: p, skip: len(http2.ClientPreface),
		resets: rate.NewLimiter(rate.Limit(p.opts.H2MaxResetsPerSecond), p.opts.H2MaxResetsPerSecond)}
	p.h2.ServeConn(c, &http2.ServeConnOpts{Context: t.ctx, BaseConfig: p.h2Base})
}

// h2Conn is the TLS connection of an intercepted tunnel served over
// HTTP/2. It reads the frame headers (RFC 9113 4.1: a 24-bit length, a
// type, flags and a stream identifier, nine octets) of what the client
// sends, as the HTTP/2 server reads it, to count the RST_STREAM frames
// (RFC 9113 6.4): past H2MaxResetsPerSecond a second on average (as many
// at once), the read fails with the connection error ENHANCE_YOUR_CALM,
// which the server answers with GOAWAY and the end of the connection
// (RFC 9113 5.4.1), counted CauseH2Resets: the rapid-reset attack
// (CVE-2023-44487) resets thousands of streams a second. The frames
// themselves are read by golang.org/x/net/http2.
type h2Conn struct {
	*tls.Conn // and its ConnectionState, which the server reads
	p         *Proxy
	resets    *rate.Limiter
	skip      int     // octets left of the client preface or of a frame's payload
	head      [9]byte // the frame header being read
	n         int     // octets of head read
}

func (c *h2Conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.scan(b[:n]) {
		c.p.opts.Metrics.CountClientRefusal(CauseH2Resets)
		return 0, http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	return n, err
}

// scan reads the frame headers among b, the next octets from the client,
// and reports whether an RST_STREAM among them is one too many.
func (c *h2Conn) scan(b []byte) bool {
	over := false
	for len(b) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip -= k
			b = b[k:]
			continue
		}
		k := copy(c.head[c.n:], b)
		c.n += k
		b = b[k:]
		if c.n < len(c.head) {
			break
		}
		c.n = 0
		c.skip = int(c.head[0])<<16 | int(c.head[1])<<8 | int(c.head[2])
		if http2.FrameType(c.head[3]) == http2.FrameRSTStream && !c.resets.Allow() {
			over = true
		}
	}
	return over
}
