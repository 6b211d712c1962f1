//go:build !linux

package e2e

import (
	"net/http"
	"net/http/httptest"
	"time"
)

// newStampedServer starts an httptest server; without kernel receive
// timestamps (Linux only), arrivedAt is when the handler runs.
func newStampedServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// arrivedAt returns now and false.
func arrivedAt(*http.Request) (time.Time, bool) { return time.Now(), false }
