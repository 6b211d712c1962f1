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

// arrivedAt returns now.
func arrivedAt(*http.Request) time.Time { return time.Now() }
