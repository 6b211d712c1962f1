package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestServiceListenerCap: the admin listener holds at most
// client.max_connections connections; one more waits, unanswered, in the
// accept queue (counted in robotsproxy_listener_refusals_total) until one
// closes; robotsproxy_listener_connections counts those open.
func TestServiceListenerCap(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Client.MaxConnections = 2 })
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := ts.s.serviceListener("admin", raw)
	srv := serviceServer(ts.s.admin, context.Background(), ts.s.cfg.Client)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	type conn struct {
		c net.Conn
		r *bufio.Reader
	}
	ask := func() conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return conn{c, bufio.NewReader(c)}
	}
	answered := func(c conn, within time.Duration) bool {
		c.c.SetReadDeadline(time.Now().Add(within))
		res, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	}
	a, b := ask(), ask()
	if !answered(a, 10*time.Second) || !answered(b, 10*time.Second) {
		t.Fatal("the first two connections are not answered")
	}
	c := ask()
	if answered(c, 300*time.Millisecond) {
		t.Fatal("a third connection is served over client.max_connections 2")
	}
	if got := ts.metric(t, `robotsproxy_listener_connections{listener="admin"}`); got != 2 {
		t.Errorf("robotsproxy_listener_connections = %v, want 2", got)
	}
	if got := ts.metric(t, `robotsproxy_listener_refusals_total{cause="max_connections",listener="admin"}`); got != 1 {
		t.Errorf("robotsproxy_listener_refusals_total = %v, want 1", got)
	}
	a.c.Close()
	if !answered(c, 10*time.Second) {
		t.Error("the third connection is not served once one closed")
	}
}
