package server

import (
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
)

// paying wraps next in the paying step of payments.*: the budgets of
// payments.identities, spent from the fleet's shared store when there is
// one (nothing is paid while it is unreachable), else from this process's
// memory. A host that breaches the protocol is paid nothing for
// payments.breach_block. Settlements the ledger did not take are logged to
// logger.
func paying(cfg config.Config, shared *fleet.Store, next http.RoundTripper, logger zerolog.Logger) http.RoundTripper {
	t := PaymentsTransport(cfg)
	t.Next, t.Ledger = next, shared.Ledger(&payments.Local{})
	t.Log = logger.With().Str("component", "payments").Logger()
	return t
}
