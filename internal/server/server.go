// Package server assembles robotsproxy from its configuration: the
// destination guard, the robots.txt fetcher and cache, the policy, the
// proxy, the audit log, metrics and the admin listener, and runs them until
// the context ends.
package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/live"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// Server is an assembled robotsproxy.
type Server struct {
	// cfg is the running configuration; only reload changes it, on
	// serve's goroutine.
	cfg     config.Config
	proxy   *proxy.Proxy
	metrics *proxy.Metrics
	cache   *access.Cache // robots.txt results, kept across reloads
	// licenses are the RSL licenses read, kept across reloads; nil when
	// none is read.
	licenses *license.Source
	// politeness is the politeness step (politeness.*, restart-only),
	// kept across reloads; nil when every politeness feature is off.
	politeness policy.Politeness
	pinner     *identity.Pinner   // kept across reloads that leave the pins alone
	shared     *fleet.Store       // the fleet's shared store, nil when off; kept across reloads
	signer     *signing.Transport // the signing egress step, nil when signing is off; its keys swap on reload
	ops        *opsMetrics
	https      intercepted // how HTTPS is enforced, for the startup line
	ready      *readiness
	run        RunOptions
	admin      http.Handler
	// live is the live view of decisions on the admin listener, nil when
	// it is off.
	live    *live.Hub
	audit   io.Writer
	closeFn func() error
	log     zerolog.Logger
	// archive is the robots.txt and key archive, nil when off.
	archive *audit.Archive
	// keys is the key directory (Web Bot Auth), nil when none is
	// published; reload swaps its content.
	keys *keyDirectory
	// dirLn is the key directory's listener (signing.directory_listen)
	// while Run serves, nil when none.
	dirLn net.Listener
	// conns is the client connection tracker of the running serve, for
	// tests that must know what a connection has sent.
	conns atomic.Pointer[tracker]
}

// registry is where the metrics are registered and gathered from.
type registry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// New assembles a Server from a validated configuration. Audit lines go to
// cfg.Log.File, or to stdout when it is empty; operational messages go to
// logger.
func New(cfg config.Config, stdout io.Writer, logger zerolog.Logger) (*Server, error) {
	return assemble(cfg, stdout, logger, prometheus.NewRegistry())
}

// assemble is New with the metrics registry.
func assemble(cfg config.Config, stdout io.Writer, logger zerolog.Logger, reg registry) (*Server, error) {
	return assembleWith(cfg, stdout, logger, reg, nil)
}

// assembleWith is assemble with the transport that carries allowed
// requests to their origins: the destination-guarded transport of
// upstream.* when base is nil, base otherwise (see NewInProcess).
func assembleWith(cfg config.Config, stdout io.Writer, logger zerolog.Logger, reg registry, base http.RoundTripper) (*Server, error) {
	guard := Guard(cfg)
	upstreamTLS, err := UpstreamTLS(cfg)
	if err != nil {
		return nil, err
	}
	fo, to := FetcherOptions(cfg, guard), TransportOptions(cfg)
	fo.TLS, to.TLS = upstreamTLS.Clone(), upstreamTLS // NewTransport clones its own
	fetcher := access.NewFetcher(fo)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var metrics *proxy.Metrics
	archive, err := openArchive(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("audit.archive_dir: %w", err)
	}
	shared, err := sharedStore(cfg, reg, logger) // nil when off
	if err != nil {
		return nil, err
	}
	fromOrigin := func(ctx context.Context, scheme, authority string) policy.Access {
		a := fetcher.Fetch(ctx, scheme, authority)
		metrics.ObserveFetch(a)
		return a
	}
	cache := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		return archiveFetch(archive, shared.Fetch(ctx, scheme, authority, fromOrigin), logger)
	}, CacheOptions(cfg))
	metrics = proxy.NewMetrics(reg, cache.Len)
	proxy.RegisterCacheMetrics(reg, cache.Bytes)
	pinner, err := identity.NewPinner(PinOptions(cfg))
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	licenses := licenseSource(cfg, fetcher, archive, logger)
	polite := politenessLimiter(cfg, reg, shared).Politeness()
	pol, err := buildPolicy(cfg, cache, pinner, licenses, polite)
	if err != nil {
		return nil, err
	}
	https, err := interception(cfg, os.Getenv, reg, logger)
	if err != nil {
		return nil, err
	}
	auditErrs := &auditErrors{log: logger, now: time.Now, interval: time.Second}
	hub := liveView(cfg, reg)
	auditW, closeFn, err := auditWriter(cfg, stdout, auditErrs.report, liveTap(hub))
	if err != nil {
		return nil, err
	}
	registerAuditMetrics(reg, auditW)
	transport := proxy.NewTransport(to) // dials through Guard(cfg)'s rules
	keysRead := time.Now()              // before egressChain reads the keys: the archive's seen_at
	var outbound http.RoundTripper = transport
	if base != nil {
		outbound = base
	}
	egressSteps, signer, err := egressChain(cfg, shared, outbound, logger)
	if err != nil {
		return nil, err
	}
	var published *signing.Published // the key directory, nil when signing is off
	if signer != nil {
		if published, err = publishDirectory(cfg, signer.Settings()); err != nil {
			return nil, err
		}
	}
	po := ProxyOptions(cfg)
	po.Intercept, po.OnUntrusted = https.config, untrustedLog(logger, https)
	po.Policy, po.Transport, po.Egress, po.Audit, po.Metrics = pol, transport, egressSteps, auditW, metrics
	po.Outbound = base // nil but in process
	p := proxy.New(po)
	ready := &readiness{}
	ready.addCheck("audit", auditReady(auditW))
	if shared != nil {
		ready.addCheck("shared", shared.Ready)
		closeFn = closeBoth(closeFn, shared.Close)
	}
	return &Server{cfg: cfg, proxy: p, metrics: metrics, cache: cache, licenses: licenses, politeness: polite, pinner: pinner, shared: shared, signer: signer,
		https: https, ops: newOpsMetrics(reg, cfg, time.Now()), ready: ready, admin: adminHandler(reg, ready, hub), live: hub,
		audit: auditW, closeFn: closeFn, log: logger,
		archive: archive, keys: newKeyDirectory(published, archive, "start", keysRead, logger)}, nil
}

// auditWriter opens the audit log destination, stdout or a file rotated
// by lumberjack, behind the group-commit writer of package audit (which
// also repairs a cut last line, chains lines when cfg.Audit.Chain, takes
// back failed writes and appends checkpoints when
// cfg.Audit.CheckpointFile). onError gets each failed write, tap (nil:
// none) each line written (the live view). The close function drains it
// and closes the checkpoint log.
func auditWriter(cfg config.Config, stdout io.Writer, onError func(error), tap func([]byte, [32]byte)) (*audit.Writer, func() error, error) {
	opts := AuditOptions(cfg)
	opts.OnError, opts.Now, opts.Tap = onError, time.Now, tap
	var out io.Writer = nopCloser{stdout}
	if cfg.Log.File != "" {
		f, prev, err := audit.OpenFile(AuditFileOptions(cfg))
		if err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		out, opts.Prev = f, prev
	}
	cp, err := openCheckpoints(cfg)
	if err != nil {
		if c, ok := out.(io.Closer); ok {
			_ = c.Close()
		}
		return nil, nil, err
	}
	opts.Checkpoints = cp
	w := audit.NewWriter(out, opts)
	return w, w.Close, nil
}

// nopCloser keeps the audit writer from closing stdout.
type nopCloser struct{ io.Writer }

// adminEndpoints are the admin listener's endpoints and what each
// answers, as GET / lists them.
var adminEndpoints = [...]struct{ path, what string }{
	{"/healthz", "200 \"ok\" while the process serves"},
	{"/readyz", "200 \"ready\" (or \"degraded: ...\") while serving; 503 with the reason before and during shutdown and while audit writes fail"},
	{"/metrics", "Prometheus metrics (text exposition format)"},
	{live.PathPage, "the live view: this replica's decisions as they happen, filterable (HTML page; docs/live.md)"},
	{live.PathEvents, "the same decisions as Server-Sent Events, filtered by ?token=, host=, decision=, reason= (robotsproxy watch reads it)"},
	{live.PathLine + "SHA256", "an audit line the live view keeps, by its SHA-256"},
}

// adminIndex answers GET / with the list of the admin endpoints, as text.
func adminIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "robotsproxy admin endpoints (GET):\n")
	for _, e := range adminEndpoints {
		_, _ = fmt.Fprintf(w, "  %-22s %s\n", e.path, e.what)
	}
}

// adminHandler serves GET / (adminIndex: the endpoints), GET /healthz
// (200 while the process serves), GET /readyz (see readiness), GET
// /metrics and the live view of hub (nil: off, its paths 404); any
// other path is 404.
func adminHandler(reg registry, ready *readiness, hub *live.Hub) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", adminIndex)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /readyz", ready)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	liveRoutes(mux, hub)
	return mux
}
