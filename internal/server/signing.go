package server

import (
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
)

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
