package server

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// serviceServer is the HTTP server of a listener other than the proxy's
// (admin, key directory) with the client limits of c: header and idle
// timeouts, a read timeout of the header timeout plus one body idle
// timeout (these listeners take no request body worth waiting for), and
// the header size. Its requests' contexts derive from base.
func serviceServer(h http.Handler, base context.Context, c config.Client) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadHeaderTimeout + c.BodyIdleTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// serviceListener wraps ln, the listener name (admin, directory), with
// the cap of client.max_connections (its own tokens: the proxy's
// connections do not count), its open connections counted in
// robotsproxy_listener_connections{listener} and each wait for a token
// in robotsproxy_listener_refusals_total{listener, cause="max_connections"}.
func (s *Server) serviceListener(name string, ln net.Listener) net.Listener {
	var open prometheus.Gauge
	waited := func() {}
	if s.ops != nil {
		open = s.ops.listenerConns.WithLabelValues(name)
		c := s.ops.listenerRefusals.WithLabelValues(name, "max_connections")
		waited = c.Inc
	}
	slots := newConnSlots(s.cfg.Client.MaxConnections, waited)
	return newLimitListener(ln, slots, func(nc net.Conn) net.Conn {
		if open != nil {
			open.Inc()
		}
		return &slotConn{Conn: nc, release: func() {
			slots.release()
			if open != nil {
				open.Dec()
			}
		}}
	})
}

// slotConn is a connection holding a token of its listener's connSlots,
// returned on the first Close.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
