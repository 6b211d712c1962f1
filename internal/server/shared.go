package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// sharedStore connects to the fleet's shared store (shared.redis_url)
// with the cache rules of cfg and the record key of
// shared.record_key_file, nil when none is configured. A key file that
// cannot be read or is too short is an error; a store that does not
// answer yet is not: the replica starts degraded.
func sharedStore(cfg config.Config, reg prometheus.Registerer, logger zerolog.Logger) (*fleet.Store, error) {
	if cfg.Shared.RedisURL == "" {
		return nil, nil
	}
	// go-redis's own messages (a dial that fails while the store is down)
	// become operational log lines, JSON like every other; go-redis keeps
	// one logger per process.
	redis.SetLogger(redisLog{logger.With().Str("component", "redis").Logger()})
	var recordKey []byte
	if cfg.Shared.RecordKeyFile != "" {
		key, err := fleet.ReadRecordKey(cfg.Shared.RecordKeyFile)
		if err != nil {
			return nil, fmt.Errorf("shared.record_key_file: %w", err)
		}
		recordKey = key
	}
	o := StoreOptions(cfg)
	o.RecordKey, o.Registerer, o.Log = recordKey, reg, logger
	return fleet.New(o)
}

// sharedPoliteness moves the spacing, back-off and in-flight cap of o into
// the shared store, each falling back to o's local one; o is unchanged
// when shared is nil.
func sharedPoliteness(shared *fleet.Store, cfg config.Config, o politeness.Options) politeness.Options {
	if shared == nil {
		return o
	}
	o.Scheduler = shared.Scheduler(o.Scheduler, SharedSchedulerOptions(cfg))
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

// redisLog is go-redis's logger (redis.SetLogger), writing to a zerolog
// logger at level warn.
type redisLog struct{ l zerolog.Logger }

func (r redisLog) Printf(_ context.Context, format string, v ...any) {
	r.l.Warn().Msg(fmt.Sprintf(format, v...))
}
