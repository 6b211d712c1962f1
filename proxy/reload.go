package proxy

import (
	"sync/atomic"

	"github.com/robotsproxy/robotsproxy/internal/usage"
	"github.com/robotsproxy/robotsproxy/policy"
)

// livePolicy is the policy that decides new requests: Options.Policy until
// SetPolicy replaces it. The zero value reads Options.Policy.
type livePolicy struct {
	p atomic.Pointer[policy.Policy]
	// decl holds the usage purposes declared per product token once
	// SetUsageDeclarations was called (its d may be nil: none declared);
	// before, Options.Usage.Declarations.
	decl atomic.Pointer[declarations]
}

// declarations boxes a possibly nil *usage.Declarations, so that a
// reload can set "none declared".
type declarations struct{ d *usage.Declarations }

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

// SetUsageDeclarations replaces the purposes declared per product token
// (usage.purposes) for requests decided from now on, as SetPolicy does for
// the policy. A nil d declares none (server.UsageDeclarations returns nil
// then). Those of users and client ranges change with the pinner.
func (p *Proxy) SetUsageDeclarations(d *usage.Declarations) {
	p.live.decl.Store(&declarations{d})
}

// declarations returns the usage declarations in force now.
func (p *Proxy) declarations() *usage.Declarations {
	if b := p.live.decl.Load(); b != nil {
		return b.d
	}
	return p.opts.Usage.Declarations
}

// policy returns the policy to decide with now.
func (p *Proxy) policy() *policy.Policy {
	if pol := p.live.p.Load(); pol != nil {
		return pol
	}
	return p.opts.Policy
}
