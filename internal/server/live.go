package server

import (
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/live"
)

// liveView returns the live view of cfg, its metrics registered on reg:
// nil when it is off (live.max_subscribers 0, or no admin listener to
// serve it), and then the audit writer keeps no ring.
func liveView(cfg config.Config, reg prometheus.Registerer) *live.Hub {
	if cfg.Live.MaxSubscribers == 0 || cfg.AdminListen == "" {
		return nil
	}
	replica, _ := os.Hostname()
	return live.New(live.Options{RingBytes: cfg.Live.RingBytes, MaxSubscribers: cfg.Live.MaxSubscribers,
		WriteTimeout: cfg.Live.WriteTimeout, Replica: replica, AuditLog: cfg.Log.File, Chain: cfg.Audit.Chain,
		Registerer: reg})
}

// liveRoutes adds the live view to the admin mux, or, when it is off,
// answers its paths 404 with how to turn it on.
func liveRoutes(mux *http.ServeMux, hub *live.Hub) {
	if hub != nil {
		hub.Routes(mux)
		return
	}
	off := func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "robotsproxy: the live view is off (live.max_subscribers: 0); set it to 1 or more and restart", http.StatusNotFound)
	}
	mux.HandleFunc("GET "+live.PathPage, off)
	mux.HandleFunc("GET "+live.PathPage+"/", off)
}

// liveTap is the audit writer's tap of hub, nil when the view is off.
func liveTap(hub *live.Hub) func([]byte, [32]byte) {
	if hub == nil {
		return nil
	}
	return hub.Tap
}
