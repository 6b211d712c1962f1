package policy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// origin is an httptest server that counts the requests it answers.
type origin struct {
	*httptest.Server
	hits atomic.Int64
}

// newOrigin starts an HTTP origin on 127.0.0.1 serving h.
func newOrigin(t *testing.T, h http.Handler) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

// serve answers every request with status, body and header key-value pairs.
func serve(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// newFetcher returns a Fetcher that may dial the loopback test servers
// unless o says otherwise.
func newFetcher(o access.FetcherOptions) *access.Fetcher {
	if o.Guard == nil {
		o.Guard = &netguard.Guard{AllowPrivate: true}
	}
	return access.NewFetcher(o)
}

// unavailableAccess is a scripted 404 result; label goes in FinalURL.
func unavailableAccess(label string, maxAge time.Duration) access.Access {
	return access.Access{Result: access.Unavailable, Status: 404, FinalURL: label, MaxAge: maxAge}
}
