package server

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
)

// auditErrors reports the audit writer's failed writes as operational
// error lines, at most one per interval: a full disk fails every request's
// write, and the log of operations must not drown in them. The next line
// says how many were left unreported. Safe for concurrent use.
type auditErrors struct {
	log      zerolog.Logger
	now      func() time.Time
	interval time.Duration

	mu         sync.Mutex
	last       time.Time // of the last line written; zero: none yet
	suppressed int       // failures since, not reported
}

// report is audit.Options.OnError.
func (a *auditErrors) report(err error) {
	a.mu.Lock()
	now := a.now()
	if !a.last.IsZero() && now.Sub(a.last) < a.interval {
		a.suppressed++
		a.mu.Unlock()
		return
	}
	n := a.suppressed
	a.last, a.suppressed = now, 0
	a.mu.Unlock()
	a.log.Error().Err(err).Int("suppressed", n).
		Msg("audit log write failed: the lines of this write are not in the log (audit.on_write_error decides what their requests get)")
}

// registerAuditMetrics exports the audit writer's failure counters.
func registerAuditMetrics(reg prometheus.Registerer, w *audit.Writer) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "robotsproxy_audit_write_errors_total",
			Help: "Writes to the audit log (or to its checkpoint log) that failed; their lines are not in the log.",
		}, func() float64 { return float64(w.Stats().WriteErrors) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "robotsproxy_audit_lost_lines_total",
			Help: "Audit lines not written because their write failed (a lost_lines marker line records them in the log once writing resumes).",
		}, func() float64 { return float64(w.Stats().LostLines) }),
	)
}

// auditReady is the /readyz check of the audit log: not ready while its
// writes fail. A failing log is tried again first (audit.Writer.Recover),
// so that a proxy taken out of rotation for it, and sent no requests,
// becomes ready once the log takes writes again.
func auditReady(w *audit.Writer) func() (bool, string) {
	return func() (bool, string) {
		if w.Failing() && w.Recover() != nil {
			return false, "audit log writes are failing (see robotsproxy_audit_write_errors_total)"
		}
		return true, ""
	}
}

// openCheckpoints opens the checkpoint log of cfg's audit section, nil
// when audit.checkpoint_file is off. The HMAC key file is read here, once;
// its contents never appear in an error.
func openCheckpoints(cfg config.Config) (*audit.Checkpoints, error) {
	a := cfg.Audit
	if a.CheckpointFile == "" {
		return nil, nil
	}
	var key []byte
	if a.CheckpointHMACKeyFile != "" {
		k, err := audit.ReadCheckpointKey(a.CheckpointHMACKeyFile)
		if err != nil {
			return nil, fmt.Errorf("audit.checkpoint_hmac_key_file: %w", err)
		}
		key = k
	}
	c, err := audit.OpenCheckpoints(CheckpointOptions(cfg, key))
	if err != nil {
		return nil, fmt.Errorf("audit.checkpoint_file: %w", err)
	}
	return c, nil
}
