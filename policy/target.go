package policy

import (
	"fmt"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/memo"
)

// target is what a decision derives from a request's scheme and Host value
// alone: the canonical scheme and authority (see Authority), the robots.txt
// URL and cache key, and the host lists' verdicts. Policy remembers targets
// per (scheme, Host value as sent) so that deciding a request to a known
// host formats and allocates nothing. A target is immutable.
type target struct {
	scheme, authority string
	host              string // hostOf(authority)
	robotsURL         string // RobotsURL(scheme, authority)
	key               string // the cache key, scheme://authority
	err               error  // from Authority; nothing else is set then
	denied            error  // non-nil when the host lists refuse the host
	exempt            bool   // the host is in ExemptHosts
}

type targetKey struct{ scheme, host string }

// targets is a Policy's memo of targets. Bounded by targetsMax entries of
// Host values of at most targetHostMax octets; cleared when full.
type targets = memo.Sync[targetKey, *target]

const (
	// targetsMax bounds the targets a Policy remembers.
	targetsMax = 4096
	// targetHostMax is the longest Host value remembered: a DNS name (253
	// octets), brackets and a port fit. Longer ones are computed each time.
	targetHostMax = 300
)

// target returns the target of a request's scheme and Host value (host
// with optional port, as sent).
func (p *Policy) target(scheme, hostport string) *target {
	k := targetKey{scheme, hostport}
	if t, ok := p.targets.Get(k); ok {
		return t
	}
	t := p.newTarget(scheme, hostport)
	if len(hostport) > targetHostMax {
		return t
	}
	k = targetKey{strings.Clone(scheme), strings.Clone(hostport)} // not the request's memory
	p.targets.Put(k, t)
	return t
}

// newTarget computes a target.
func (p *Policy) newTarget(scheme, hostport string) *target {
	scheme, authority, err := Authority(scheme, hostport)
	if err != nil {
		return &target{err: err}
	}
	t := &target{scheme: scheme, authority: authority, host: hostOf(authority),
		robotsURL: RobotsURL(scheme, authority), key: CacheKey(scheme, authority)}
	if !p.destinationAllowed(t.host) {
		t.denied = fmt.Errorf("%s: %w", t.host, errHostDenied)
	}
	t.exempt = p.exempts.match(t.host)
	return t
}

// Authority is the package's Authority, remembered per (scheme, hostport):
// a request to a known host costs no allocation.
func (p *Policy) Authority(scheme, hostport string) (string, string, error) {
	t := p.target(scheme, hostport)
	return t.scheme, t.authority, t.err
}
