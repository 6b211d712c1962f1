// Package egress carries what robotsproxy does to a request after policy
// let it through and before it reaches the origin: signing it (Web Bot
// Auth, package signing) and paying for it (pay per crawl, package
// payments). Each step is an http.RoundTripper around the next one, ending
// at the proxy's outbound transport; the proxy hands every forwarded
// request an Exchange in its context, and each step reads the Identity
// from it and writes what it did into its Record, for the audit line.
//
// Nothing here runs when no step is configured: the proxy then forwards
// through its transport exactly as before.
package egress

import (
	"context"
	"net/http"
	"net/netip"
	"time"
)

// Identity is who a forwarded request is sent for: it selects the signing
// key and the budget. It is the identity policy decided the request for.
type Identity struct {
	// Token is the product token the request was decided for ("*" when
	// the crawler has none).
	Token string
	// User is the authenticated proxy user, "" when none.
	User string
	// Range is the client range (identity.client_ranges) that pinned the
	// identity, the zero Prefix when none did.
	Range netip.Prefix
	// Client is the client's address, the zero Addr when unknown.
	Client netip.Addr
}

// Record is what the egress steps did to one request. The zero Record
// means nothing was done.
type Record struct {
	// SignatureKeyID is the keyid (JWK SHA-256 thumbprint, RFC 7638) of
	// the key that signed the request, "" when it was not signed.
	SignatureKeyID string
	// SignatureCreated is the signature's created parameter, the zero
	// Time when it was not signed.
	SignatureCreated time.Time
	// Charged is the amount the origin charged (its crawler-charged
	// field), as a decimal string, "" when nothing was charged.
	Charged string
	// Currency is the currency of Charged (ISO 4217 code).
	Currency string
	// Price is the price a 402 asked (crawler-price), "" when none.
	Price string
	// NotPaid says why a 402 was passed to the client unpaid, "" when it
	// was paid or there was none.
	NotPaid string
	// Breach says how the origin's charge broke the pay per crawl
	// agreement (auditlog.PaymentBreach values), "" when it did not.
	Breach string
	// SigningError says why the request could not be signed (and was not
	// sent): one of the signing package's Cause values, "" when it was
	// signed or was not to be. It is counted in the proxy's metrics; the
	// audit line carries the error itself.
	SigningError string
}

// Exchange is one forwarded request's identity (read by the steps) and
// record (written by them). The steps of one request run one after the
// other, never at once: no lock is needed.
type Exchange struct {
	Identity Identity
	// ReportOnly is set on a request that policy denied and that is
	// forwarded only because the mode is report: no step may sign it or
	// pay for it (each passes it on as the client sent it, less the
	// fields by which a client would agree to a price).
	ReportOnly bool
	Record     Record
}

type key struct{}

// NewContext returns ctx carrying x.
func NewContext(ctx context.Context, x *Exchange) context.Context {
	return context.WithValue(ctx, key{}, x)
}

// FromContext returns the Exchange of ctx, nil when it carries none (a
// request the proxy did not forward, such as its own robots.txt fetch).
func FromContext(ctx context.Context) *Exchange {
	x, _ := ctx.Value(key{}).(*Exchange)
	return x
}

// Of returns the Exchange of req's context, nil when none.
func Of(req *http.Request) *Exchange {
	return FromContext(req.Context())
}
