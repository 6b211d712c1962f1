package config

import (
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Live configures the live view on the admin listener (/live, /live/events
// and robotsproxy watch): the decisions of this replica as they happen.
type Live struct {
	// MaxSubscribers caps the live view's streams open at once (pages and
	// watch); one more is answered 503 and counted. 0 turns the live view
	// off: the audit writer then keeps no ring. Default 8.
	MaxSubscribers int `yaml:"max_subscribers"`
	// RingBytes is the memory of the ring of recent decisions a new
	// stream starts from, in octets (the audit lines as written, about
	// 700 octets each). Default 4194304 (4 MiB); at least 1048576.
	RingBytes int `yaml:"ring_bytes"`
	// WriteTimeout drops a stream whose subscriber does not take its
	// events for this long (counted in
	// robotsproxy_live_subscribers_dropped_total); a subscriber that
	// merely lags skips decisions instead. Default 10s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
}

func defaultLive() Live {
	return Live{MaxSubscribers: rules.DefaultLiveMaxSubscribers, RingBytes: rules.DefaultLiveRingBytes, WriteTimeout: rules.DefaultLiveWriteTimeout}
}

// validateLive checks the live section.
func (c *Config) validateLive() error {
	l := c.Live
	checks := []struct {
		key string
		err error
	}{
		{"live.max_subscribers", atLeast(l.MaxSubscribers, 0, "")},
		{"live.ring_bytes", atLeast(l.RingBytes, rules.MinLiveRingBytes, "")},
		{"live.write_timeout", positive(l.WriteTimeout)},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return keyError(ch.key, ch.err)
		}
	}
	return nil
}
