// Package server assembles robotsproxy from its configuration: the
// destination guard, the robots.txt fetcher and cache, the policy, the
// proxy, the audit log, metrics and the admin listener, and runs them until
// the context ends.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/robotsproxy/robotsproxy/config"
	"github.com/robotsproxy/robotsproxy/mitm"
	"github.com/robotsproxy/robotsproxy/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Server is an assembled robotsproxy.
type Server struct {
	cfg     config.Config
	proxy   http.Handler
	admin   http.Handler
	audit   io.Writer
	closeFn func() error
	log     zerolog.Logger
}

// New assembles a Server from a validated configuration. Audit lines go to
// cfg.Log.File, or to stdout when it is empty; operational messages go to
// logger.
func New(cfg config.Config, stdout io.Writer, logger zerolog.Logger) (*Server, error) {
	guard := &netguard.Guard{AllowPrivate: cfg.AllowPrivate, Allow: cfg.PrivateRanges()}
	overrides, err := compileOverrides(cfg.Identity.Overrides)
	if err != nil {
		return nil, err
	}
	fetcher := policy.NewFetcher(policy.FetcherOptions{
		Guard:                      guard,
		UserAgent:                  cfg.Robots.UserAgent,
		ConnectTimeout:             cfg.Robots.ConnectTimeout,
		Timeout:                    cfg.Robots.Timeout,
		Parse:                      robots.Options{MaxBytes: cfg.Robots.MaxBytes},
		TooManyRequestsUnreachable: cfg.Robots.TooManyRequests == "unreachable",
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var metrics *proxy.Metrics
	cache := policy.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		a := fetcher.Fetch(ctx, scheme, authority)
		metrics.ObserveFetch(a)
		return a
	}, policy.CacheOptions{
		MaxEntries:       cfg.Cache.MaxEntries,
		MaxTTL:           cfg.Cache.MaxTTL,
		MinTTL:           cfg.Cache.MinTTL,
		UnreachableRetry: cfg.Cache.UnreachableRetry,
		StaleFor:         cfg.Cache.StaleFor,
	})
	metrics = proxy.NewMetrics(reg, cache.Len)
	pinner, err := policy.NewPinner(cfg.PinOptions())
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	pol := policy.New(policy.Options{
		Identifier:    policy.NewIdentifier(cfg.Identity.BrowserTokens, overrides),
		Cache:         cache,
		Pinner:        pinner,
		ExemptHosts:   cfg.ExemptHosts,
		AllowHosts:    cfg.AllowHosts,
		DenyHosts:     cfg.DenyHosts,
		ConnectPorts:  cfg.Connect.Ports,
		RefuseConnect: cfg.Connect.Refuse,
	})
	intercept, err := interception(cfg.MITM, reg, logger)
	if err != nil {
		return nil, err
	}
	auditW, closeFn := auditWriter(cfg.Log, stdout)
	p := proxy.New(proxy.Options{
		Intercept: intercept,
		Policy:    pol,
		Transport: proxy.NewTransport(guard, proxy.TransportOptions{
			ConnectTimeout:        cfg.Upstream.ConnectTimeout,
			ResponseHeaderTimeout: cfg.Upstream.ResponseHeaderTimeout,
			MaxIdleConns:          cfg.Upstream.MaxIdleConns,
			MaxIdleConnsPerHost:   cfg.Upstream.MaxIdleConnsPerHost,
			IdleTimeout:           cfg.Upstream.IdleTimeout,
		}),
		Audit:   proxy.NewAuditLogger(auditW),
		Metrics: metrics,
	})
	return &Server{cfg: cfg, proxy: p, admin: adminHandler(reg), audit: auditW, closeFn: closeFn, log: logger}, nil
}

func compileOverrides(rules []config.OverrideRule) ([]policy.Override, error) {
	out := make([]policy.Override, 0, len(rules))
	for i, r := range rules {
		re, err := regexp.Compile(r.UserAgent)
		if err != nil {
			return nil, fmt.Errorf("identity.overrides[%d].user_agent: %w", i, err)
		}
		out = append(out, policy.Override{Pattern: re, Token: r.Token})
	}
	return out, nil
}

// interception loads the operator's CA and returns the leaf-certificate
// source for intercepted tunnels, or nil when no CA is configured.
func interception(m config.MITM, reg prometheus.Registerer, logger zerolog.Logger) (func(string, *goproxy.ProxyCtx) (*tls.Config, error), error) {
	if m.CACert == "" {
		logger.Info().Msg("no CA configured: CONNECT tunnels get a host-level decision (set -ca-cert and -ca-key to enforce paths over HTTPS)")
		return nil, nil
	}
	ca, err := mitm.LoadCA(m.CACert, m.CAKey)
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{MaxEntries: m.MaxCerts})
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	proxy.RegisterCertMetrics(reg, certs.Stats)
	logger.Info().Str("ca", ca.Certificate().Subject.CommonName).Str("sha256", ca.Fingerprint()).
		Msg("intercepting CONNECT tunnels: every HTTPS request is decided on its path")
	return certs.TLSConfig, nil
}

// auditWriter opens the audit log destination: stdout, or a file rotated by
// lumberjack.
func auditWriter(l config.Log, stdout io.Writer) (io.Writer, func() error) {
	if l.File == "" {
		return stdout, func() error { return nil }
	}
	lj := &lumberjack.Logger{Filename: l.File, MaxSize: l.MaxSizeMB, MaxBackups: l.MaxBackups, MaxAge: l.MaxAgeDays}
	if l.MaxSizeMB == 0 {
		lj.MaxSize = 1 << 20 // MiB: in effect never
	}
	return lj, lj.Close
}

// adminHandler serves GET /healthz and GET /metrics.
func adminHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// Run listens on the configured addresses and serves until ctx ends, then
// shuts down gracefully within cfg.ShutdownTimeout.
func (s *Server) Run(ctx context.Context) error {
	defer s.closeFn()
	servers := []*http.Server{{Addr: s.cfg.Listen, Handler: s.proxy, ReadHeaderTimeout: 30 * time.Second}}
	if s.cfg.AdminListen != "" {
		servers = append(servers, &http.Server{Addr: s.cfg.AdminListen, Handler: s.admin, ReadHeaderTimeout: 10 * time.Second})
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		ln, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			shutdown(servers[:i], time.Second)
			return fmt.Errorf("listen %s: %w", srv.Addr, err)
		}
		name := [...]string{"proxy", "admin"}[i]
		s.log.Info().Str("listener", name).Str("addr", ln.Addr().String()).Msg("listening")
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case <-ctx.Done():
		s.log.Info().Msg("shutting down")
	case err := <-errc:
		shutdown(servers, s.cfg.ShutdownTimeout)
		return fmt.Errorf("serve: %w", err)
	}
	if err := shutdown(servers, s.cfg.ShutdownTimeout); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// shutdown stops the servers, waiting up to timeout for requests in flight.
func shutdown(servers []*http.Server, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
