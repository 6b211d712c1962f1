package server

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// readyPhase is where the server is in its life, as /readyz sees it.
type readyPhase int32

const (
	// phaseStarting: the configuration and the CA are loaded (New), the
	// listeners not yet open.
	phaseStarting readyPhase = iota
	// phaseServing: both listeners are open and served.
	phaseServing
	// phaseStopping: shutdown began; requests in flight are draining.
	phaseStopping
)

// readyCheck is one component's view of readiness: ready false makes the
// server not ready (503); ready true with a reason makes it "degraded"
// (still 200), for instance a shared store that is down while the replica
// falls back to local state.
type readyCheck struct {
	name  string
	check func() (ready bool, reason string)
}

// readiness answers GET /readyz: 503 "not ready: starting" before the
// listeners are open, 200 "ready" while serving, 503 "not ready: shutting
// down" once shutdown begins, so that a load balancer stops sending new
// connections while requests in flight drain. Checks refine the serving
// state. Safe for concurrent use; the zero value is starting.
type readiness struct {
	phase  atomic.Int32
	mu     sync.Mutex
	checks []readyCheck
}

// set moves to phase p.
func (r *readiness) set(p readyPhase) { r.phase.Store(int32(p)) }

// addCheck adds a named check, consulted on every /readyz while serving.
func (r *readiness) addCheck(name string, check func() (ready bool, reason string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, readyCheck{name, check})
}

// status returns the /readyz status code and body line: "ready",
// "degraded: NAME: REASON; ...", or "not ready: REASON; ...".
func (r *readiness) status() (int, string) {
	switch readyPhase(r.phase.Load()) {
	case phaseStarting:
		return http.StatusServiceUnavailable, "not ready: starting"
	case phaseStopping:
		return http.StatusServiceUnavailable, "not ready: shutting down"
	}
	r.mu.Lock()
	checks := r.checks
	r.mu.Unlock()
	var down, degraded []string
	for _, c := range checks {
		ready, reason := c.check()
		switch {
		case !ready:
			down = append(down, c.name+": "+reason)
		case reason != "":
			degraded = append(degraded, c.name+": "+reason)
		}
	}
	switch {
	case len(down) > 0:
		return http.StatusServiceUnavailable, "not ready: " + strings.Join(down, "; ")
	case len(degraded) > 0:
		return http.StatusOK, "degraded: " + strings.Join(degraded, "; ")
	}
	return http.StatusOK, "ready"
}

func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	code, line := r.status()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, line+"\n")
}
