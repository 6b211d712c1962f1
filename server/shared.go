package server

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/config"
	"github.com/robotsproxy/robotsproxy/fleet"
	"github.com/robotsproxy/robotsproxy/politeness"
	"github.com/robotsproxy/robotsproxy/robots"
)

// sharedStore connects to the fleet's shared store (shared.redis_url,
// issue 12) with the cache rules of cfg, nil when none is configured. A
// store that does not answer yet is no error: the replica starts degraded.
func sharedStore(cfg config.Config, reg prometheus.Registerer, logger zerolog.Logger) (*fleet.Store, error) {
	if cfg.Shared.RedisURL == "" {
		return nil, nil
	}
	return fleet.New(fleet.Options{
		URL:              cfg.Shared.RedisURL,
		KeyPrefix:        cfg.Shared.KeyPrefix,
		LockTTL:          cfg.Shared.LockTTL,
		Timeout:          cfg.Shared.Timeout,
		WaitFor:          cfg.Robots.Timeout,
		MinTTL:           cfg.Cache.MinTTL,
		MaxTTL:           cfg.Cache.MaxTTL,
		UnreachableRetry: cfg.Cache.UnreachableRetry,
		Parse:            robots.Options{MaxBytes: cfg.Robots.MaxBytes},
		Registerer:       reg,
		Log:              logger,
	})
}

// sharedPoliteness moves the spacing, back-off and in-flight cap of o into
// the shared store, each falling back to o's local one; o is unchanged
// when shared is nil.
func sharedPoliteness(shared *fleet.Store, cfg config.Config, o politeness.Options) politeness.Options {
	if shared == nil {
		return o
	}
	o.Scheduler = shared.Scheduler(o.Scheduler, fleet.SchedulerOptions{
		DefaultBackoff: cfg.Politeness.DefaultBackoff, MaxBackoff: cfg.Politeness.MaxBackoff})
	if o.MaxConcurrentPerHost > 0 {
		o.Gate = shared.Gate(o.MaxConcurrentPerHost, politeness.NewLocalGate(o.MaxConcurrentPerHost))
	}
	return o
}

// closeBoth returns a close function that runs first, then second, and
// joins their errors.
func closeBoth(first, second func() error) func() error {
	return func() error { return errors.Join(first(), second()) }
}
