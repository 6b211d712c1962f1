package server

import (
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// NewInProcess assembles a Server from a validated configuration as New
// does, for a caller that serves requests in its own process (see package
// enforce) rather than through Run's listeners: allowed requests are
// carried to their origins by base (after the egress steps, signing and
// paying, when configured) instead of the destination-guarded transport of
// upstream.*; robots.txt is still fetched through the guard. Audit lines
// go to cfg.Log.File, or to auditOut when it is empty. Serve requests with
// Handler; Close drains the audit log. It serves no admin listener, so
// no live view: the audit writer keeps no ring.
func NewInProcess(cfg config.Config, base http.RoundTripper, auditOut io.Writer, logger zerolog.Logger) (*Server, error) {
	cfg.AdminListen = ""
	return assembleWith(cfg, auditOut, logger, prometheus.NewRegistry(), base)
}

// Handler returns the proxy: an http.Handler that serves absolute-form
// proxy requests, deciding, refusing or forwarding each and writing its
// audit line (see proxy.Proxy.ServeHTTP).
func (s *Server) Handler() http.Handler { return s.proxy }

// Close drains and closes the audit log and the fleet's shared store, as
// Run does when it returns. Call it once, and only on a Server that is not
// Run.
func (s *Server) Close() error { return s.closeFn() }
