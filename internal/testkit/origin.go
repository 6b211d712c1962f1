package testkit

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Origin is an httptest server that counts the requests it answers. It
// stops when the test ends.
type Origin struct {
	*httptest.Server
	hits atomic.Int64
}

// Hits returns the number of requests the origin has answered.
func (o *Origin) Hits() int64 { return o.hits.Load() }

func (o *Origin) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		h.ServeHTTP(w, r)
	})
}

// NewOrigin starts an HTTP origin on 127.0.0.1 serving h.
func NewOrigin(t testing.TB, h http.Handler) *Origin {
	t.Helper()
	o := &Origin{}
	o.Server = httptest.NewServer(o.count(h))
	t.Cleanup(o.Close)
	return o
}

// NewOriginAt starts an HTTP origin listening on addr (such as
// "127.0.0.2:0"), skipping the test when it cannot listen there.
func NewOriginAt(t testing.TB, addr string, h http.Handler) *Origin {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("SKIPPED: cannot listen on %s: %v", addr, err)
	}
	o := &Origin{}
	o.Server = httptest.NewUnstartedServer(o.count(h))
	o.Listener.Close()
	o.Listener = ln
	o.Start()
	t.Cleanup(o.Close)
	return o
}

// NewTLSOrigin starts an HTTPS origin on 127.0.0.1 serving h, with
// httptest's certificate; failed handshakes (expected of a client that
// does not trust it) are not logged.
func NewTLSOrigin(t testing.TB, h http.Handler) *Origin {
	t.Helper()
	o := &Origin{}
	o.Server = httptest.NewUnstartedServer(o.count(h))
	o.Config.ErrorLog = log.New(io.Discard, "", 0)
	o.StartTLS()
	t.Cleanup(o.Close)
	return o
}
