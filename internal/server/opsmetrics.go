package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// opsMetrics are the server's own metrics: configuration reloads, the
// robots.txt cache's capacity and the key directory listener's requests.
type opsMetrics struct {
	reloads     *prometheus.CounterVec
	lastOK      prometheus.Gauge
	lastOKTime  prometheus.Gauge
	restartKeys prometheus.Gauge
	directory   *prometheus.CounterVec // by code; no series without a directory listener
	// listenerConns and listenerRefusals count the connections of the
	// admin and key directory listeners (the proxy's are
	// robotsproxy_client_connections and robotsproxy_client_refusals_total).
	listenerConns    *prometheus.GaugeVec   // by listener
	listenerRefusals *prometheus.CounterVec // by listener, cause
}

// newOpsMetrics registers the metrics on reg; the configuration loaded at
// start counts as the last successful load, at now.
func newOpsMetrics(reg prometheus.Registerer, cfg config.Config, now time.Time) *opsMetrics {
	m := &opsMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "robotsproxy_config_reloads_total",
			Help: "Configuration reloads (SIGHUP) by result: applied, or refused (the running configuration stays).",
		}, []string{"result"}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_config_last_reload_successful",
			Help: "1 when the last configuration load (at start or SIGHUP) was applied, 0 when it was refused.",
		}),
		lastOKTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last configuration load applied (at start or SIGHUP).",
		}),
		restartKeys: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_config_restart_pending_keys",
			Help: "Restart-only configuration keys whose value in the file, at the last reload applied, differs from the running one.",
		}),
	}
	m.directory = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsproxy_key_directory_requests_total",
		Help: "Requests to the key directory listener (signing.directory_listen), by HTTP status code.",
	}, []string{"code"})
	m.listenerConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "robotsproxy_listener_connections",
		Help: "Connections open on the admin and key directory listeners, by listener.",
	}, []string{"listener"})
	m.listenerRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsproxy_listener_refusals_total",
		Help: "Connections of the admin and key directory listeners held back by a client limit, by listener and cause (max_connections: one waited for a free slot).",
	}, []string{"listener", "cause"})
	capacity := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "robotsproxy_cache_max_authorities",
		Help: "Capacity of the robots.txt cache in authorities (cache.max_entries); compare robotsproxy_cached_authorities.",
	})
	m.reloads.WithLabelValues("applied")
	m.reloads.WithLabelValues("refused")
	m.lastOK.Set(1)
	m.lastOKTime.Set(float64(now.UnixNano()) / 1e9)
	capacity.Set(float64(cfg.Cache.MaxEntries))
	reg.MustRegister(m.reloads, m.lastOK, m.lastOKTime, m.restartKeys, m.directory, m.listenerConns, m.listenerRefusals, capacity)
	return m
}

// reloaded records a reload: applied or refused, and when applied, how
// many restart-only keys changed in the file.
func (m *opsMetrics) reloaded(applied bool, restartKeys int, now time.Time) {
	if !applied {
		m.reloads.WithLabelValues("refused").Inc()
		m.lastOK.Set(0)
		return
	}
	m.reloads.WithLabelValues("applied").Inc()
	m.lastOK.Set(1)
	m.lastOKTime.Set(float64(now.UnixNano()) / 1e9)
	m.restartKeys.Set(float64(restartKeys))
}
