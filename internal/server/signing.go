package server

import (
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
)

// SigningSettings reads the keys of signing.identities (call after
// Validate) and returns the signing settings they make: one Agent per
// entry, selected by user, client range, product token or as the
// default. A key that cannot be read, or an active key without its
// private key, is an error naming the key.
func SigningSettings(c config.Config) (*signing.Settings, error) {
	s := &signing.Settings{Label: c.Signing.Label, Expires: c.Signing.Expires, MaxBodyBytes: c.Signing.MaxBodyBytes,
		Agents: egress.Table[*signing.Agent]{Users: map[string]*signing.Agent{}, Ranges: map[netip.Prefix]*signing.Agent{},
			Tokens: map[string]*signing.Agent{}}}
	for i := range c.Signing.Identities {
		id := &c.Signing.Identities[i]
		a, err := signingAgent(id)
		if err != nil {
			return nil, fmt.Errorf("signing.identities[%d].%w", i, err)
		}
		a.ProductToken = c.TokenOf(id.Selector())
		s.All = append(s.All, a)
		config.AddTo(&s.Agents, id.Selector(), a)
	}
	if err := s.Validate(time.Now()); err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return s, nil
}

// signingAgent reads one identity's key directories; its Signature-Agent
// URL is the configured one as a JWK Set URI (signing.JWKSURL).
func signingAgent(id *config.SigningIdentity) (*signing.Agent, error) {
	a := &signing.Agent{URL: signing.JWKSURL(id.SignatureAgent), Card: id.Card}
	active := id.ActiveKey()
	for j, dir := range id.Keys {
		k, err := signing.LoadKeyDir(dir)
		if err != nil {
			return nil, fmt.Errorf("keys[%d]: %w", j, err)
		}
		a.Keys = append(a.Keys, k)
		if dir == active {
			if !k.CanSign() {
				return nil, fmt.Errorf("active: %s holds no %s: the active key must be able to sign", dir, signing.PrivateKeyFile)
			}
			a.Active = k
		}
	}
	return a, nil
}

// egressChain returns the egress steps around transport for cfg, nil
// when none is on (the proxy then forwards exactly as without them), and
// the signing step, nil when signing is off. The chain, outermost first:
// paying (payments.enabled), signing (signing.enabled), the transport; the
// paid retry goes through signing, so its crawler-exact-price is signed.
func egressChain(cfg config.Config, shared *fleet.Store, transport http.RoundTripper, logger zerolog.Logger) (http.RoundTripper, *signing.Transport, error) {
	var chain http.RoundTripper
	next := transport
	var signer *signing.Transport
	if cfg.Signing.Enabled {
		settings, err := SigningSettings(cfg)
		if err != nil {
			return nil, nil, err
		}
		signer = signing.NewTransport(transport, settings)
		next, chain = signer, signer
	}
	if cfg.Payments.Enabled {
		chain = paying(cfg, shared, next, logger)
	}
	return chain, signer, nil
}
