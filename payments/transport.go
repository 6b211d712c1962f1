package payments

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/egress"
)

// Header fields of pay per crawl (Cloudflare's documentation) and the
// one robotsproxy adds to an unpaid 402.
const (
	// HeaderPrice is the price a 402 asks: "USD 0.01".
	HeaderPrice = "Crawler-Price"
	// HeaderExactPrice is the price the crawler agrees to pay, equal to
	// HeaderPrice; robotsproxy sends it on its one paid retry.
	HeaderExactPrice = "Crawler-Exact-Price"
	// HeaderMaxPrice is the most a crawler would pay without a 402
	// first; robotsproxy never sends it.
	HeaderMaxPrice = "Crawler-Max-Price"
	// HeaderCharged is what the origin charged, on its paid answer.
	HeaderCharged = "Crawler-Charged"
	// HeaderError is the origin's error code (ConflictingPriceHeaders,
	// InvalidCrawlerExactPrice, ...).
	HeaderError = "Crawler-Error"
	// HeaderNotPaid is added to a 402 that reaches the client unpaid: one
	// of the auditlog.NotPaid values.
	HeaderNotPaid = "X-Robotsproxy-Not-Paid"
)

// DefaultMaxBodyBytes bounds the request body Transport buffers to send
// it again when the request has no GetBody.
const DefaultMaxBodyBytes = 1 << 20

// Limit is one payments.identities entry: what an identity may pay.
type Limit struct {
	// Budget names the entry; identities the entry covers share its
	// budget (Key.Budget).
	Budget string
	// Currency is the ISO 4217 code of MaxPrice and PerDay.
	Currency string
	// MaxPrice is the most one request may cost.
	MaxPrice Amount
	// PerDay is the budget of one UTC day.
	PerDay Amount
}

// Transport is the paying egress step: an http.RoundTripper around Next
// (the signing step when signing is on, else the outbound transport).
// Requests without an egress.Exchange (not forwarded for a client) go to
// Next untouched. It is safe for concurrent use once built.
//
// Client requests never carry crawler-exact-price or crawler-max-price
// past it: robotsproxy is the one who pays, within the identity's caps,
// so both are removed from every forwarded request (a client could
// otherwise spend past its budget).
type Transport struct {
	// Next sends the request on.
	Next http.RoundTripper
	// Limits maps identities to their Limit; an identity without one
	// pays nothing.
	Limits *egress.Table[Limit]
	// Ledger counts the spend per budget and UTC day.
	Ledger Ledger
	// Now is the clock that picks the UTC day; nil is time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds the body buffered for the retry of a request
	// without GetBody; 0 is DefaultMaxBodyBytes. A longer body is sent
	// once, and its 402 is not paid (auditlog.NotPaidBody).
	MaxBodyBytes int64
	// Log receives the ledger errors that come after a request was sent
	// (a settlement or release the store did not take); the zero Logger
	// logs nothing. A failed release leaves the amount counted: the
	// budget errs on the side of paying less.
	Log zerolog.Logger
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	x := egress.Of(req)
	if x == nil {
		return t.Next.RoundTrip(req)
	}
	if req.Header.Get(HeaderExactPrice) != "" || req.Header.Get(HeaderMaxPrice) != "" {
		req = req.Clone(req.Context())
		req.Header.Del(HeaderExactPrice)
		req.Header.Del(HeaderMaxPrice)
	}
	var limit Limit
	hasLimit, replay := false, false
	if t.Limits != nil {
		limit, hasLimit = t.Limits.Lookup(x.Identity)
	}
	if hasLimit {
		req, replay = t.replayable(req)
	}
	resp, err := t.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		t.chargedUnasked(req.Context(), x, resp, limit, hasLimit)
		return resp, nil
	}
	return t.priced(req, resp, x, limit, hasLimit, replay)
}

// priced handles a 402: pays and retries, or returns it with the reason.
func (t *Transport) priced(req *http.Request, resp *http.Response, x *egress.Exchange, limit Limit, hasLimit, replay bool) (*http.Response, error) {
	raw := strings.TrimSpace(resp.Header.Get(HeaderPrice))
	price, err := ParsePrice(raw)
	if err != nil {
		return notPaid(resp, x, auditlog.NotPaidBadPrice), nil
	}
	x.Record.Price, x.Record.Currency = price.Amount.String(), price.Currency
	switch {
	case !hasLimit || limit.PerDay == 0:
		return notPaid(resp, x, auditlog.NotPaidNoBudget), nil
	case price.Currency != limit.Currency:
		return notPaid(resp, x, auditlog.NotPaidCurrency), nil
	case price.Amount > limit.MaxPrice:
		return notPaid(resp, x, auditlog.NotPaidOverMaxPrice), nil
	case !replay:
		return notPaid(resp, x, auditlog.NotPaidBody), nil
	}
	k := Key{Budget: limit.Budget, Currency: limit.Currency, Day: DayOf(t.now())}
	ok, err := t.Ledger.Reserve(req.Context(), k, price.Amount, limit.PerDay)
	switch {
	case err != nil:
		return notPaid(resp, x, auditlog.NotPaidStoreUnavailable), nil
	case !ok:
		return notPaid(resp, x, auditlog.NotPaidOverBudget), nil
	}
	retry, err := retryRequest(req, raw)
	if err != nil {
		t.adjust(req.Context(), k, -price.Amount)
		return notPaid(resp, x, auditlog.NotPaidBody), nil
	}
	discard(resp)
	paid, err := t.Next.RoundTrip(retry)
	if err != nil {
		t.adjust(req.Context(), k, -price.Amount)
		x.Record.NotPaid = auditlog.NotPaidRetryFailed
		return nil, fmt.Errorf("pay per crawl: paid retry: %w", err)
	}
	return t.settle(req.Context(), paid, x, k, price), nil
}

// settle books the paid retry's answer: the charge it names replaces the
// reservation; without one the reservation is released and a 402 or
// crawler-error says why.
func (t *Transport) settle(ctx context.Context, resp *http.Response, x *egress.Exchange, k Key, price Price) *http.Response {
	charged, err := ParsePrice(resp.Header.Get(HeaderCharged))
	if err == nil {
		x.Record.Charged, x.Record.Currency = charged.Amount.String(), charged.Currency
		if charged.Currency == k.Currency && charged.Amount != price.Amount {
			t.adjust(ctx, k, charged.Amount-price.Amount)
		}
		return resp
	}
	t.adjust(ctx, k, -price.Amount)
	switch again := resp.Header.Get(HeaderPrice); {
	case resp.StatusCode == http.StatusPaymentRequired && again != "" && !samePrice(again, price):
		return notPaid(resp, x, auditlog.NotPaidPriceChanged)
	case resp.StatusCode == http.StatusPaymentRequired || resp.Header.Get(HeaderError) != "":
		return notPaid(resp, x, auditlog.NotPaidRefused)
	}
	return resp
}

// chargedUnasked books a charge on an answer robotsproxy did not pay
// for (an origin that charges without a 402 first): recorded, and counted
// against the identity's budget without a cap.
func (t *Transport) chargedUnasked(ctx context.Context, x *egress.Exchange, resp *http.Response, limit Limit, hasLimit bool) {
	v := resp.Header.Get(HeaderCharged)
	if v == "" {
		return
	}
	charged, err := ParsePrice(v)
	if err != nil {
		return
	}
	x.Record.Charged, x.Record.Currency = charged.Amount.String(), charged.Currency
	if hasLimit && charged.Currency == limit.Currency {
		k := Key{Budget: limit.Budget, Currency: limit.Currency, Day: DayOf(t.now())}
		t.adjust(ctx, k, charged.Amount)
	}
}

// samePrice reports whether the header value v names price.
func samePrice(v string, price Price) bool {
	p, err := ParsePrice(v)
	return err == nil && p == price
}

// notPaid marks resp and the record with why it was not paid.
func notPaid(resp *http.Response, x *egress.Exchange, why string) *http.Response {
	x.Record.NotPaid = why
	resp.Header.Set(HeaderNotPaid, why)
	return resp
}

// retryRequest is req again with crawler-exact-price set to price (the
// origin's crawler-price as written) and a fresh body.
func retryRequest(req *http.Request, price string) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("pay per crawl: request body again: %w", err)
		}
		r.Body = body
	}
	r.Header.Del(HeaderMaxPrice)
	r.Header.Set(HeaderExactPrice, price)
	return r, nil
}

// replayable returns req with a body that can be read again (GetBody),
// buffering at most MaxBodyBytes of it, and whether it can.
func (t *Transport) replayable(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, true
	}
	limit := t.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	buf, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	r := req.Clone(req.Context())
	if err != nil || int64(len(buf)) > limit {
		// Send what was read and the rest as one stream; it cannot be
		// sent twice (a read error reaches Next as the body's error).
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), errReader{req.Body, err}), req.Body}
		return r, false
	}
	_ = req.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return r, true
}

// adjust settles or releases in the ledger, even when the client has
// left (the request's context is done), logging a failure.
func (t *Transport) adjust(ctx context.Context, k Key, delta Amount) {
	if err := t.Ledger.Adjust(context.WithoutCancel(ctx), k, delta); err != nil {
		t.Log.Warn().Err(err).Str("budget", k.Budget).Str("currency", k.Currency).Str("day", k.Day).
			Str("delta", delta.String()).Msg("pay per crawl: the spend ledger did not take a settlement")
	}
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// discard reads a little of the unpaid answer's body, so that its
// connection can be reused, and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// readCloser is a body read from r and closed by c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

// errReader returns err, when not nil, instead of reading r.
type errReader struct {
	r   io.Reader
	err error
}

func (e errReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return e.r.Read(p)
}
