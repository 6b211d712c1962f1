package server

import (
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/config"
	"github.com/robotsproxy/robotsproxy/fleet"
	"github.com/robotsproxy/robotsproxy/payments"
)

// egressSteps returns the egress steps (proxy.Options.Egress) around the
// outbound transport, nil when none is configured (the proxy then
// forwards through the transport as before). The chain, outermost first:
// paying (payments.enabled), then signing, then the transport; the paid
// retry goes through signing, so its crawler-exact-price is signed.
func egressSteps(cfg config.Config, shared *fleet.Store, transport http.RoundTripper, logger zerolog.Logger) http.RoundTripper {
	next, on := transport, false
	// Signing (signing.*) wraps next here, before paying wraps it.
	if cfg.Payments.Enabled {
		next, on = paying(cfg, shared, next, logger), true
	}
	if !on {
		return nil
	}
	return next
}

// paying wraps next in the paying step of payments.*: the budgets of
// payments.identities, spent from the fleet's shared store when there is
// one (nothing is paid while it is unreachable), else from this process's
// memory. Settlements the ledger did not take are logged to logger.
func paying(cfg config.Config, shared *fleet.Store, next http.RoundTripper, logger zerolog.Logger) http.RoundTripper {
	return &payments.Transport{Next: next, Limits: PaymentLimits(cfg), Ledger: shared.Ledger(&payments.Local{}),
		Log: logger.With().Str("component", "payments").Logger()}
}
