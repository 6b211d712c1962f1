package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// testServer is a Server serving on a loopback listener until the test
// ends or stop is called.
type testServer struct {
	s     *Server
	addr  string
	audit *testkit.AuditSink
	log   *testkit.AuditSink
	stop  func() error
}

// startServer runs New(cfg) with the defaults changed by mod, private
// destinations allowed and no admin listener.
func startServer(t *testing.T, mod func(*config.Config)) *testServer {
	t.Helper()
	cfg := config.Default()
	cfg.AllowPrivate = true
	cfg.AdminListen = ""
	if mod != nil {
		mod(&cfg)
	}
	ts := &testServer{audit: &testkit.AuditSink{}, log: &testkit.AuditSink{}}
	s, err := New(cfg, ts.audit, zerolog.New(ts.log))
	if err != nil {
		t.Fatal(err)
	}
	ts.s = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, nil) }()
	var once sync.Once
	var serveErr error
	ts.stop = func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { _ = ts.stop() })
	return ts
}

// metric returns the value of the sample "name" or "name{labels}" from the
// admin handler's /metrics, 0 when absent.
func (ts *testServer) metric(t *testing.T, sample string) float64 {
	t.Helper()
	for _, line := range strings.Split(ts.metricsText(t), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if ok && name == sample {
			v, _ := strconv.ParseFloat(value, 64)
			return v
		}
	}
	return 0
}

// metricsText returns the admin handler's /metrics.
func (ts *testServer) metricsText(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	ts.s.admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// exchange writes req on a new connection and reads until the server
// closes it or wait passes: what came back and whether the server closed.
func (ts *testServer) exchange(t *testing.T, req string, wait time.Duration) (string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return readUntilClosed(c, wait)
}

// readUntilClosed reads c until EOF or wait passes.
func readUntilClosed(c net.Conn, wait time.Duration) (string, bool) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	var out bytes.Buffer
	_, err := io.Copy(&out, c)
	return out.String(), err == nil
}

// statusOf returns the status code of the first response in raw, 0 if
// none.
func statusOf(raw string) int {
	if !strings.HasPrefix(raw, "HTTP/1.") || len(raw) < 12 {
		return 0
	}
	n, _ := strconv.Atoi(raw[9:12])
	return n
}
