package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// politenessLimiter returns the politeness limiter of the configuration,
// with its metrics registered on reg; nil when every politeness feature is
// off. With a shared store its state is the fleet's.
func politenessLimiter(cfg config.Config, reg prometheus.Registerer, shared *fleet.Store) *politeness.Limiter {
	if !cfg.PolitenessOn() {
		return nil
	}
	o := sharedPoliteness(shared, cfg, PolitenessOptions(cfg))
	o.Observer = politeness.NewMetrics(reg)
	return politeness.New(o)
}
