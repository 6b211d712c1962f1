package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/redistest"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// startRedisServer starts a redis-server for the test (see
// redistest.Start); the test may Kill it and Restart it on the same port.
func startRedisServer(t *testing.T) *redistest.Server { return redistest.Start(t) }

// fleetOrigin serves a robots.txt that can change, counts the proxies'
// robots.txt fetches, and records when every other request arrived.
type fleetOrigin struct {
	srv     *httptest.Server
	fetches atomic.Int64

	mu       sync.Mutex
	robots   string
	maxAge   string // Cache-Control of robots.txt, "" for none
	delay    time.Duration
	arrivals []arrival
}

func newFleetOrigin(t *testing.T, robots string) *fleetOrigin {
	o := &fleetOrigin{robots: robots}
	o.srv = testkit.NewStampedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now, stamped := testkit.ArrivedAt(r)
		o.mu.Lock()
		body, cc, delay := o.robots, o.maxAge, o.delay
		if r.URL.Path != "/robots.txt" {
			o.arrivals = append(o.arrivals, arrival{path: r.URL.Path, at: now, stamped: stamped})
		}
		o.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			if strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
				o.fetches.Add(1)
			}
			time.Sleep(delay)
			if cc != "" {
				w.Header().Set("Cache-Control", cc)
			}
			_, _ = io.WriteString(w, body)
			return
		}
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	return o
}

// set changes robots.txt.
func (o *fleetOrigin) set(robots string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.robots = robots
}

// seen returns the arrivals of the requests other than robots.txt, in
// order.
func (o *fleetOrigin) seen() []arrival {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.arrivals)
	slices.SortFunc(out, func(a, b arrival) int { return a.at.Compare(b.at) })
	return out
}
