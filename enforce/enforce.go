package enforce

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/server"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// Options configure a Transport.
type Options struct {
	// Config is robotsproxy's configuration (LoadConfig, ParseConfig or
	// DefaultConfig). The zero Config is serve's defaults: mode enforce,
	// no private destinations, crawl delays ignored unless
	// politeness.crawl_delay is enforce.
	Config Config
	// Base carries allowed requests to their origins; default
	// http.DefaultTransport.
	Base http.RoundTripper
	// Audit receives the audit lines, one JSON line per request, when
	// the configuration's log.file is empty; default os.Stdout, as the
	// proxy's.
	Audit io.Writer
	// Logger receives operational messages (robots.txt archive, audit
	// write errors); default none.
	Logger *zerolog.Logger
}

// Transport is an http.RoundTripper that enforces robots.txt (see the
// package documentation). It is safe for concurrent use. Close it to drain
// the audit log.
type Transport struct {
	srv  *server.Server
	h    http.Handler
	base http.RoundTripper
	log  zerolog.Logger
}

// New returns a Transport for o. Its error names the configuration key at
// fault (an invalid Config, an unreadable log.file or key file).
func New(o Options) (*Transport, error) {
	cfg := o.Config.serve()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("enforce: %w", err)
	}
	if o.Base == nil {
		o.Base = http.DefaultTransport
	}
	if o.Audit == nil {
		o.Audit = os.Stdout
	}
	logger := zerolog.Nop()
	if o.Logger != nil {
		logger = *o.Logger
	}
	srv, err := server.NewInProcess(cfg, baseTransport{o.Base}, o.Audit, logger)
	if err != nil {
		return nil, fmt.Errorf("enforce: %w", err)
	}
	return &Transport{srv: srv, h: srv.Handler(), base: o.Base, log: logger}, nil
}

// MustNew is New for a program's setup: it panics when New returns an
// error.
func MustNew(o Options) *Transport {
	t, err := New(o)
	if err != nil {
		panic(err)
	}
	return t
}

// Close drains and closes the audit log (and the fleet's shared store, when
// configured). Requests after Close are refused with 503
// audit-unavailable, or cut off.
func (t *Transport) Close() error {
	return t.srv.Close()
}

// CloseIdleConnections closes the idle connections of the wrapped
// transport, when it has the method (http.Client.CloseIdleConnections
// calls it).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// ErrCutOff is the error of a request (or of its response body's Read)
// that the proxy cut off: its audit line could not be written and
// audit.on_write_error is refuse (the proxy closes the client's
// connection), or the origin's answer ended early.
var ErrCutOff = errors.New("enforce: request cut off (its audit line could not be written, or the answer ended early)")

// Refusal returns the reason robotsproxy refused resp, one of the audit
// line's reasons (package auditlog: "rule", "unreachable", "usage",
// ...), and whether resp is a refusal at all: a response of the
// origin's, even a 403, is not one. It reads the X-Robotsproxy-Decision
// and X-Robotsproxy-Reason headers that the proxy sets on its refusals.
func Refusal(resp *http.Response) (reason string, refused bool) {
	if resp == nil || resp.Header.Get(proxy.HeaderDecision) != "deny" {
		return "", false
	}
	return resp.Header.Get(proxy.HeaderReason), true
}
