package proxy

import (
	"sync/atomic"

	"github.com/robotsproxy/robotsproxy/policy"
)

// livePolicy is the policy that decides new requests: Options.Policy until
// SetPolicy replaces it. The zero value reads Options.Policy.
type livePolicy struct {
	p atomic.Pointer[policy.Policy]
}

// SetPolicy makes pol decide every request that starts deciding from now
// on (a configuration reload). Requests already deciding finish
// with the policy they started with; connections and tunnels stay open,
// and a request inside an intercepted tunnel keeps the identity pinned
// when the tunnel was opened. A nil pol is ignored: the proxy never runs
// without a policy. Safe for concurrent use with ServeHTTP.
func (p *Proxy) SetPolicy(pol *policy.Policy) {
	if pol != nil {
		p.live.p.Store(pol)
	}
}

// policy returns the policy to decide with now.
func (p *Proxy) policy() *policy.Policy {
	if pol := p.live.p.Load(); pol != nil {
		return pol
	}
	return p.opts.Policy
}
