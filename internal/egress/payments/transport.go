package payments

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
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

// DefaultBreachBlock is how long payments to a host stay blocked after it
// breached the protocol (Transport.BreachBlock; payments.breach_block).
const DefaultBreachBlock = 24 * time.Hour

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
// Client requests never carry crawler-exact-price or crawler-max-price,
// in any spelling (RemovePriceFields), past it: robotsproxy is the one who
// pays, within the identity's caps, so both are removed from every
// forwarded request (a client could otherwise spend past its budget).
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
	// BreachBlock is how long no payment is made to a host after it
	// breached the protocol (charged without an agreement, or more than
	// agreed); 0 is DefaultBreachBlock.
	BreachBlock time.Duration
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
	if hasPriceField(req.Header) {
		req = req.Clone(req.Context())
		RemovePriceFields(req.Header)
	}
	var limit Limit
	hasLimit, replay := false, false
	if t.Limits != nil {
		limit, hasLimit = t.Limits.Lookup(x.Identity)
	}
	if hasLimit && !x.ReportOnly {
		req, replay = t.replayable(req)
	}
	resp, err := t.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if t.chargedUnasked(req, x, resp, limit, hasLimit) {
		if resp.StatusCode == http.StatusPaymentRequired {
			return t.unpaid(resp, x, auditlog.NotPaidBreach), nil
		}
		return resp, nil
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		return resp, nil
	}
	return t.priced(req, resp, x, limit, hasLimit, replay)
}

// priced handles a 402: pays and retries, or returns it with the reason.
func (t *Transport) priced(req *http.Request, resp *http.Response, x *egress.Exchange, limit Limit, hasLimit, replay bool) (*http.Response, error) {
	raw := strings.TrimSpace(resp.Header.Get(HeaderPrice))
	price, err := ParsePrice(raw)
	if err == nil {
		x.Record.Price, x.Record.Currency = price.Amount.String(), price.Currency
	}
	switch {
	case x.ReportOnly:
		return t.unpaid(resp, x, auditlog.NotPaidReportOnly), nil
	case err != nil:
		return t.unpaid(resp, x, auditlog.NotPaidBadPrice), nil
	case !hasLimit || limit.PerDay == 0:
		return t.unpaid(resp, x, auditlog.NotPaidNoBudget), nil
	case price.Currency != limit.Currency:
		return t.unpaid(resp, x, auditlog.NotPaidCurrency), nil
	case price.Amount > limit.MaxPrice:
		return t.unpaid(resp, x, auditlog.NotPaidOverMaxPrice), nil
	case !replay:
		return t.unpaid(resp, x, auditlog.NotPaidBody), nil
	}
	host := hostOf(req)
	blocked, err := t.Ledger.Blocked(req.Context(), host, t.now())
	switch {
	case err != nil:
		return t.unpaid(resp, x, auditlog.NotPaidStoreUnavailable), nil
	case blocked:
		return t.unpaid(resp, x, auditlog.NotPaidBreach), nil
	}
	// The agreed amount is the price as the retry's crawler-exact-price
	// names it: the most the crawler agrees to pay for this request.
	k := Key{Budget: limit.Budget, Currency: limit.Currency, Day: DayOf(t.now())}
	ok, err := t.Ledger.Reserve(req.Context(), k, price.Amount, limit.PerDay)
	switch {
	case err != nil:
		return t.unpaid(resp, x, auditlog.NotPaidStoreUnavailable), nil
	case !ok:
		return t.unpaid(resp, x, auditlog.NotPaidOverBudget), nil
	}
	retry, err := retryRequest(req, raw)
	if err != nil {
		t.adjust(req.Context(), k, -price.Amount, limit.PerDay)
		return t.unpaid(resp, x, auditlog.NotPaidBody), nil
	}
	discard(resp)
	retry, sent := traceSent(retry)
	paid, err := t.Next.RoundTrip(retry)
	if err != nil {
		if sent.Load() {
			// The origin may have billed: the agreed amount stays counted.
			x.Record.NotPaid = auditlog.NotPaidUnknownOutcome
		} else {
			t.adjust(req.Context(), k, -price.Amount, limit.PerDay)
			x.Record.NotPaid = auditlog.NotPaidRetryFailed
		}
		return nil, fmt.Errorf("pay per crawl: paid retry: %w", err)
	}
	return t.settle(req.Context(), paid, x, agreement{k: k, price: price, budget: limit.PerDay, host: host}), nil
}

// agreement is one paid retry's terms: the budget key the price was
// reserved under, the price agreed (crawler-exact-price), the budget,
// and the host.
type agreement struct {
	k      Key
	price  Price
	budget Amount
	host   string
}

// settle books the paid retry's answer: the charge it names replaces the
// reservation, as far as the budget goes; a charge above the agreed price
// (or in another currency) is a breach. Without a charge the reservation
// is released and a 402 or crawler-error says why; with one that cannot
// be read it stays counted.
func (t *Transport) settle(ctx context.Context, resp *http.Response, x *egress.Exchange, a agreement) *http.Response {
	v := resp.Header.Get(HeaderCharged)
	charged, err := ParsePrice(v)
	switch {
	case err == nil:
		x.Record.Charged, x.Record.Currency = charged.Amount.String(), charged.Currency
		switch {
		case charged.Currency != a.price.Currency:
			t.breach(ctx, x, a.host, auditlog.PaymentBreachOverAgreed) // the reservation stays counted
		case charged.Amount > a.price.Amount:
			t.breach(ctx, x, a.host, auditlog.PaymentBreachOverAgreed)
			t.adjust(ctx, a.k, charged.Amount-a.price.Amount, a.budget)
		case charged.Amount < a.price.Amount:
			t.adjust(ctx, a.k, charged.Amount-a.price.Amount, a.budget)
		}
		return resp
	case strings.TrimSpace(v) != "":
		x.Record.NotPaid = auditlog.NotPaidUnknownOutcome
		return resp
	}
	t.adjust(ctx, a.k, -a.price.Amount, a.budget)
	switch again := resp.Header.Get(HeaderPrice); {
	case resp.StatusCode == http.StatusPaymentRequired && again != "" && !samePrice(again, a.price):
		return t.unpaid(resp, x, auditlog.NotPaidPriceChanged)
	case resp.StatusCode == http.StatusPaymentRequired || resp.Header.Get(HeaderError) != "":
		return t.unpaid(resp, x, auditlog.NotPaidRefused)
	}
	return resp
}

// chargedUnasked books a charge on an answer robotsproxy agreed to no
// price for (an origin that charges without a 402 first, on a 402, or on
// a report-only request): recorded as charged, marked as a breach that
// blocks the host, and counted against the identity's budget as far as
// the budget goes. It reports whether there was a readable charge of
// more than nothing.
func (t *Transport) chargedUnasked(req *http.Request, x *egress.Exchange, resp *http.Response, limit Limit, hasLimit bool) bool {
	v := resp.Header.Get(HeaderCharged)
	if v == "" {
		return false
	}
	charged, err := ParsePrice(v)
	if err != nil {
		return false
	}
	x.Record.Charged, x.Record.Currency = charged.Amount.String(), charged.Currency
	if charged.Amount == 0 {
		return false // nothing taken: no breach
	}
	t.breach(req.Context(), x, hostOf(req), auditlog.PaymentBreachUnasked)
	if hasLimit && charged.Currency == limit.Currency {
		k := Key{Budget: limit.Budget, Currency: limit.Currency, Day: DayOf(t.now())}
		t.adjust(req.Context(), k, charged.Amount, limit.PerDay)
	}
	return true
}

// breach records how the origin broke the agreement and blocks payments
// to host for BreachBlock.
func (t *Transport) breach(ctx context.Context, x *egress.Exchange, host, how string) {
	x.Record.Breach = how
	if t.Ledger == nil {
		return
	}
	if err := t.Ledger.Block(context.WithoutCancel(ctx), host, t.now(), t.breachBlock()); err != nil {
		t.Log.Warn().Err(err).Str("host", host).Msg("pay per crawl: the spend ledger did not take a breach block")
	}
}

func (t *Transport) breachBlock() time.Duration {
	if t.BreachBlock > 0 {
		return t.BreachBlock
	}
	return DefaultBreachBlock
}

// hostOf is the host payments to req's origin are blocked by: its URL's
// host, lower-case, without port.
func hostOf(req *http.Request) string {
	return strings.ToLower(req.URL.Hostname())
}

// traceSent returns req with a trace that sets sent once its header
// fields have been written to the connection: from then on the origin may
// have acted on its crawler-exact-price.
func traceSent(req *http.Request) (*http.Request, *atomic.Bool) {
	sent := new(atomic.Bool)
	trace := &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }}
	return req.WithContext(httptrace.WithClientTrace(req.Context(), trace)), sent
}

// samePrice reports whether the header value v names price.
func samePrice(v string, price Price) bool {
	p, err := ParsePrice(v)
	return err == nil && p == price
}

// unpaid marks the record, and resp but for a report-only request (whose
// client must not tell it from an allowed one), with why it was not paid.
func (t *Transport) unpaid(resp *http.Response, x *egress.Exchange, why string) *http.Response {
	x.Record.NotPaid = why
	if !x.ReportOnly {
		resp.Header.Set(HeaderNotPaid, why)
	}
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
	RemovePriceFields(r.Header)
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

// adjust settles or releases in the ledger (a positive delta only as far
// as budget), even when the client has left (the request's context is
// done), logging a failure.
func (t *Transport) adjust(ctx context.Context, k Key, delta, budget Amount) {
	if err := t.Ledger.Adjust(context.WithoutCancel(ctx), k, delta, budget); err != nil {
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
