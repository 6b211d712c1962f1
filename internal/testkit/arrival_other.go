//go:build !linux

package testkit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// NewStampedServer starts an httptest server; without kernel receive
// timestamps (Linux only), ArrivedAt says when the handler runs.
func NewStampedServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// ArrivedAt returns now and false: no kernel timestamp here.
func ArrivedAt(*http.Request) (time.Time, bool) { return time.Now(), false }
