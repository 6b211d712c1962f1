package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// shutdownGrace bounds how long a shutdown waits, after shutdown_timeout,
// for the handlers it cut off to answer 503 and return.
const shutdownGrace = 5 * time.Second

// Run listens on the configured addresses and serves until ctx ends, then
// shuts down: see serve. Each value received on o.Reload reloads the
// configuration (see Server.reload). The audit log is closed (drained)
// last, after every handler has returned or been abandoned.
func (s *Server) Run(ctx context.Context, o RunOptions) error {
	defer s.closeFn()
	s.run = o
	setMemoryLimit(s.cfg, os.Getenv, debug.SetMemoryLimit, s.log)
	proxyLn, err := listen("proxy", "listen", "-listen", s.cfg.Listen)
	if err != nil {
		return err
	}
	var adminLn net.Listener
	if s.cfg.AdminListen != "" {
		if adminLn, err = listen("admin", "admin_listen", "-admin-listen", s.cfg.AdminListen); err != nil {
			proxyLn.Close()
			return err
		}
	}
	if err := s.listenDirectory(); err != nil {
		proxyLn.Close()
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	return s.serve(ctx, proxyLn, adminLn)
}

// listen opens the TCP listener name on addr. Its error names the
// listener, the configuration key and the serve flag that set addr, and
// for a port in use says so in words.
func listen(name, key, flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	what := fmt.Sprintf("%s listener on %s (%s, flag %s)", name, addr, key, flag)
	if flag == "" {
		what, flag = fmt.Sprintf("%s listener on %s (%s)", name, addr, key), key
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s: the address is already in use by another process: stop it, or choose another port with %s or %s: %w", what, flag, key, err)
	case errors.Is(err, syscall.EACCES):
		return nil, fmt.Errorf("%s: permission denied (ports below 1024 need privileges): choose another port with %s or %s: %w", what, flag, key, err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, fmt.Errorf("%s: no interface of this machine has that address: choose another with %s or %s: %w", what, flag, key, err)
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// serve serves the proxy on proxyLn and the admin handler on adminLn (nil:
// none) until ctx ends or a listener fails, then shuts down; /readyz
// answers ready from the start until shutdown begins, and each value of
// s.run.Reload reloads the configuration meanwhile. Shutdown
// closes the connections still sending a request line and headers (those
// requests will not be served; a partial one is audited with reason
// "shutdown"), then waits up to cfg.ShutdownTimeout for requests in
// flight; when that
// expires it cuts off the rest: their contexts are cancelled with
// proxy.ErrShutdown (upstream round trips abort, clients get 503, audit
// lines carry cut_off "shutdown"), it waits up to shutdownGrace more for
// their handlers, writes the lines of those still running (status 0) and
// closes every connection, hijacked tunnels included.
func (s *Server) serve(ctx context.Context, proxyLn, adminLn net.Listener) error {
	base, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	t := newTracker(s.proxy, s.metrics, s.cfg.Client.MaxConnections, time.Now)
	s.conns.Store(t)
	servers := []*http.Server{s.proxyServer(base, t)}
	lns := []net.Listener{t.listen(proxyLn)}
	names := []string{"proxy"}
	if adminLn != nil {
		admin := serviceServer(s.admin, base, s.cfg.Client)
		if s.live != nil {
			admin.RegisterOnShutdown(s.live.Close) // its streams never end on their own
		}
		servers = append(servers, admin)
		lns, names = append(lns, s.serviceListener("admin", adminLn)), append(names, "admin")
	}
	if s.dirLn != nil {
		servers = append(servers, s.directoryServer(base))
		lns, names = append(lns, s.serviceListener("directory", s.dirLn)), append(names, "directory")
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		s.log.Info().Str("listener", names[i]).Str("addr", lns[i].Addr().String()).Msg("listening")
		go func() { errc <- srv.Serve(lns[i]) }()
	}
	s.logStartup(names, lns)
	s.ready.set(phaseServing)
	serveErr := s.wait(ctx, errc)
	s.ready.set(phaseStopping)
	return errors.Join(serveErr, s.shutdown(servers, t, cancel))
}

// wait serves reloads until ctx ends (nil) or a server fails (its error).
func (s *Server) wait(ctx context.Context, errc <-chan error) error {
	for {
		select {
		case <-ctx.Done():
			s.log.Info().Msg("shutting down")
			return nil
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case <-s.run.Reload:
			s.reload()
		}
	}
}

// proxyServer is the proxy's HTTP server with the client limits of
// cfg.Client. Its requests' contexts derive from base, and carry their
// connection's watcher (see clientConn). OPTIONS * reaches the proxy
// handler (answered 400 as a non-proxy request, and audited).
func (s *Server) proxyServer(base context.Context, t *tracker) *http.Server {
	c := s.cfg.Client
	return &http.Server{
		Handler:                      s.proxy,
		ReadHeaderTimeout:            c.ReadHeaderTimeout,
		IdleTimeout:                  c.IdleTimeout,
		MaxHeaderBytes:               c.MaxHeaderBytes,
		DisableGeneralOptionsHandler: true,
		BaseContext:                  func(net.Listener) context.Context { return base },
		ConnContext: func(ctx context.Context, nc net.Conn) context.Context {
			if cc, ok := nc.(*clientConn); ok {
				return proxy.WithConnObserver(ctx, cc)
			}
			return ctx
		},
	}
}

// shutdown stops the servers as serve describes.
func (s *Server) shutdown(servers []*http.Server, t *tracker, cancel context.CancelCauseFunc) error {
	t.stopping.Store(true)
	// A request not fully read by now will not be served (conn.serve drops
	// it when shutting down): do not wait up to 5s for it as Shutdown does.
	t.closeReading()
	err := shutdownWithin(servers, s.cfg.ShutdownTimeout)
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
		s.cutOff(servers, t, cancel)
	}
	for _, srv := range servers {
		_ = srv.Close() // a request cut short while being read is audited here
	}
	t.stop()
	if n := t.closeAll(); n > 0 {
		s.log.Info().Int("connections", n).Msg("closed hijacked connections (CONNECT tunnels)")
	}
	return err
}

// cutOff ends the requests still in flight when the shutdown timeout
// expired: it cancels their contexts with proxy.ErrShutdown, waits up to
// shutdownGrace for the handlers to answer and return, and abandons those
// that do not.
func (s *Server) cutOff(servers []*http.Server, t *tracker, cancel context.CancelCauseFunc) {
	s.log.Warn().Int("in_flight", s.proxy.InFlight()).Dur("shutdown_timeout", s.cfg.ShutdownTimeout).
		Msg("shutdown timeout expired: cutting off the requests in flight (503, cut_off \"shutdown\")")
	cancel(proxy.ErrShutdown)
	ctx, stop := context.WithTimeout(context.Background(), shutdownGrace)
	defer stop()
	_ = shutdownAll(ctx, servers) // returns once the cut-off responses are flushed
	s.proxy.WaitIdle(ctx)
	if n := s.proxy.Abandon(); n > 0 {
		s.log.Warn().Int("abandoned", n).Dur("grace", shutdownGrace).
			Msg("handlers still running after the grace period: audited with status 0")
	}
}

// shutdownWithin shuts the servers down gracefully, waiting up to timeout
// for requests in flight.
func shutdownWithin(servers []*http.Server, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return shutdownAll(ctx, servers)
}

// shutdownAll shuts the servers down, all within ctx.
func shutdownAll(ctx context.Context, servers []*http.Server) error {
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
