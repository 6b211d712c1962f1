package server

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
)

// RunOptions configure Run.
type RunOptions struct {
	// Reload delivers reload requests (main sends SIGHUP here); each one
	// reads the configuration with Load and applies it (see Server.reload).
	// Nil: no reloads.
	Reload <-chan os.Signal
	// Load reads the configuration again, flags applied as at start, and
	// validates it. Required when Reload is set.
	Load func() (config.Config, error)
	// ConfigFile is the configuration file read at start, "" for none
	// (the built-in defaults), for the startup line.
	ConfigFile string
	// Version is the binary's version, for the startup line.
	Version string
}

// reload reads the configuration with s.run.Load and applies it to new
// requests: the reloadable keys (reloadableKeys) take effect, through a
// new policy swapped in with proxy.SetPolicy; connections and requests in
// flight are left alone; the robots.txt cache (less its unreachable
// results, which are fetched again), the metrics and, when the pins are
// unchanged, the pinner (its auth throttle and verified credentials) are
// kept.
//
// A configuration that does not load or validate is refused as a whole:
// the running one stays, and the error, which names the key, is logged.
// Restart-only keys whose value changed are logged as needing a restart
// and keep their running value; the rest applies. The result is exported
// in the robotsproxy_config_* metrics. Runs on serve's goroutine.
func (s *Server) reload() {
	next, err := s.prepareReload()
	if err != nil {
		s.ops.reloaded(false, 0, time.Now())
		s.log.Error().Err(err).Msg("configuration reload refused: the running configuration stays")
		return
	}
	s.proxy.SetPolicy(next.policy)
	if next.signing != nil {
		s.signer.Store(next.signing) // requests in flight keep the keys they loaded
	}
	s.cfg, s.pinner = next.diff.next, next.pinner
	s.reloadDirectory(next.directory, next.keysRead)
	// What made an origin unreachable may be what the operator just fixed
	// (its certificate, its DNS, a destination rule): the next request
	// fetches robots.txt again rather than being refused until
	// cache.unreachable_retry runs out, here and in the fleet's records.
	forgot := s.cache.ForgetUnreachable()
	s.shared.ForgetUnreachable()
	s.ops.reloaded(true, len(next.diff.restart), time.Now())
	if len(next.diff.restart) > 0 { // before the outcome: the line a reader waits for comes last
		s.log.Warn().Strs("keys", next.diff.restart).
			Msg("configuration reload: these keys take effect only after a restart; their running values stay")
	}
	s.log.Info().Strs("changed", nonNil(next.diff.applied)).Int("unreachable_cleared", forgot).Msg("configuration reloaded")
}

// pendingReload is a configuration ready to be swapped in.
type pendingReload struct {
	diff   configDiff
	pinner *identity.Pinner
	policy *policy.Policy
	// signing are the signing settings with the keys read again, nil
	// when signing is off.
	signing *signing.Settings
	// directory is the key directory of those keys, nil when signing is
	// off.
	directory *signing.Published
	// keysRead is when the keys were read: before any request is signed
	// with them, the time the archive records them from.
	keysRead time.Time
}

// prepareReload loads the configuration and builds its policy, without
// changing anything. The configuration to run (the file's reloadable keys
// over the running restart-only ones) is validated as a whole: for
// instance dropping every identity.users entry is refused while the
// running listener is beyond loopback.
func (s *Server) prepareReload() (pendingReload, error) {
	if s.run.Load == nil {
		return pendingReload{}, fmt.Errorf("reload: no configuration source")
	}
	file, err := s.run.Load()
	if err != nil {
		return pendingReload{}, err
	}
	r := pendingReload{diff: diffConfig(s.cfg, file)}
	if err := r.diff.next.Validate(); err != nil {
		if len(r.diff.restart) > 0 {
			err = fmt.Errorf("%w (checked with the running values of the restart-only keys %s)",
				err, strings.Join(r.diff.restart, ", "))
		}
		return pendingReload{}, err
	}
	r.pinner = s.pinner
	if !reflect.DeepEqual(PinOptions(s.cfg), PinOptions(r.diff.next)) {
		if r.pinner, err = identity.NewPinner(PinOptions(r.diff.next)); err != nil {
			return pendingReload{}, fmt.Errorf("identity: %w", err)
		}
	}
	if r.policy, err = buildPolicy(r.diff.next, s.cache, r.pinner, s.licenses, s.politeness); err != nil {
		return pendingReload{}, err
	}
	r.keysRead = time.Now()
	if s.signer != nil { // the key files are read again, changed or not
		if r.signing, err = SigningSettings(r.diff.next); err != nil {
			return pendingReload{}, err
		}
	}
	if r.directory, err = publishDirectory(r.diff.next, r.signing); err != nil {
		return pendingReload{}, err
	}
	return r, nil
}

// buildPolicy builds the policy of cfg's reloadable keys around the
// robots.txt cache, the pinner, the license source and the politeness
// step; usage.* and politeness.* are restart-only, so a reload builds it
// with the running values.
func buildPolicy(cfg config.Config, cache *access.Cache, pinner *identity.Pinner, licenses *license.Source, polite policy.Politeness) (*policy.Policy, error) {
	o, err := PolicyOptions(cfg)
	if err != nil {
		return nil, err
	}
	o.Cache, o.Pinner, o.Politeness = cache, pinner, polite
	if licenses != nil { // no typed nil in the interface
		o.Usage.Licenses = licenses
	}
	return policy.New(o), nil
}

// nonNil makes an empty list log as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
