// Package payments pays for crawls on behalf of the crawler: Cloudflare's
// pay per crawl, as documented at
// https://developers.cloudflare.com/ai-crawl-control/features/pay-per-crawl/.
//
// A priced page answers 402 with "crawler-price: USD 0.01". Transport,
// an egress step (package egress), looks up the budget of the request's
// identity (Limit, in an egress.Table) and, when the price is within the
// identity's max_price per request and within what is left of its budget
// for the UTC day, reserves the price in a Ledger and retries once with
// "crawler-exact-price" set to the price as the origin wrote it: that
// price is the most it agrees to pay. An answer with "crawler-charged"
// settles the reservation to the amount charged; one without releases it;
// a retry that was sent and got no answer keeps it (the origin may have
// billed). Otherwise the client gets the 402 unchanged, plus the
// X-Robotsproxy-Not-Paid header field saying why (the auditlog.NotPaid
// values), and the audit line's not_paid says the same.
//
// The budget is a ceiling whatever the origin does: every addition to
// the ledger is capped by the budget. A charge above the agreed price (or
// in another currency, or on an answer no price was agreed for) is
// recorded as charged, marked as a breach (auditlog.FieldPaymentBreach),
// counted as far as the budget goes, and blocks payments to the host for
// Transport.BreachBlock. A request forwarded only because the mode is
// report (egress.Exchange.ReportOnly) is never paid for.
//
// Money is exact: amounts are integers in millionths of a currency unit
// (Amount), never floating point. The ledger is Local (one process) or
// the fleet's shared store (fleet.Store.Ledger, Redis or Valkey), where
// one script checks the budget and reserves atomically; when the store
// cannot answer, nothing is paid.
package payments
