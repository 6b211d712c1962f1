// Package paytest is an origin for tests that implements Cloudflare's pay
// per crawl as documented
// (https://developers.cloudflare.com/ai-crawl-control/features/pay-per-crawl/use-pay-per-crawl-as-ai-owner/crawl-pages/
// and .../error-codes/): a priced page answers 402 with crawler-price;
// a request with crawler-exact-price equal to the current price, or
// crawler-max-price at or above it, gets 200 with crawler-charged; errors
// come with crawler-error.
package paytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
)

// Error codes of crawler-error, with the status Cloudflare documents for
// each. InvalidSignature is answered when Origin.Check refuses a request
// (StrongAuthRequired never is); CrawlerForbidden,
// PaymentFailed and InvalidContentPrice are answered for the paths
// PathForbidden, PathPaymentFailed and PathBadPrice.
const (
	ErrCrawlerForbidden         = "CrawlerForbidden"         // 403
	ErrStrongAuthRequired       = "StrongAuthRequired"       // 400
	ErrInvalidSignature         = "InvalidSignature"         // 400
	ErrInvalidCrawlerPriceValue = "InvalidCrawlerPriceValue" // 400
	ErrMissingCrawlerPrice      = "MissingCrawlerPrice"      // 402
	ErrPaymentFailed            = "PaymentFailed"            // 403
	ErrInvalidCrawlerExactPrice = "InvalidCrawlerExactPrice" // 402
	ErrInvalidCrawlerMaxPrice   = "InvalidCrawlerMaxPrice"   // 402
	ErrConflictingPriceHeaders  = "ConflictingPriceHeaders"  // 400
	ErrInvalidContentPrice      = "InvalidContentPrice"      // 502
)

// Paths with a fixed behaviour; every other path is priced.
const (
	PathFree          = "/free"           // 200, never priced
	PathForbidden     = "/forbidden"      // 403 CrawlerForbidden
	PathPaymentFailed = "/payment-failed" // 403 PaymentFailed on a paid request
	PathBadPrice      = "/bad-price"      // 402 with an unreadable crawler-price
)

// Body is the body of a paid (or free) page.
const Body = "the priced page\n"

// Origin is a pay per crawl origin on a loopback httptest server.
type Origin struct {
	*httptest.Server
	// Check, when set, is called with every request for a priced page
	// (before the price headers are read); an error answers 400
	// InvalidSignature, as a site that verifies signatures would (set it
	// to verify Web Bot Auth signatures).
	Check func(*http.Request) error
	// Files, when set before the first request, are answered 200 with
	// their body at their path ahead of every other rule (a robots.txt
	// with rules, a license). HOST in a body is replaced by the request's
	// Host.
	Files map[string]string

	mu      sync.Mutex
	price   string
	charge  string
	paid    int
	bodies  []string
	asked   func() // called after each 402 that asks a price
	headers []http.Header
	// Hostile behaviours (see SetChargeAsking, SetHangPaid).
	chargeAsking string
	hangPaid     bool
	chargedSum   map[string]payments.Amount
}

// New starts an origin whose pages cost price ("USD 0.01"); it stops when
// the test ends.
func New(t testing.TB, price string) *Origin {
	t.Helper()
	if _, err := payments.ParsePrice(price); err != nil {
		t.Fatal(err)
	}
	o := &Origin{price: price}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

// NewTLS is New on an https origin (httptest's certificate: trust it
// with o.Client()'s TLS configuration).
func NewTLS(t testing.TB, price string) *Origin {
	t.Helper()
	if _, err := payments.ParsePrice(price); err != nil {
		t.Fatal(err)
	}
	o := &Origin{price: price}
	o.Server = httptest.NewTLSServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

// SetPrice changes the price from now on.
func (o *Origin) SetPrice(p string) { o.mu.Lock(); o.price = p; o.mu.Unlock() }

// SetCharge makes the origin charge c instead of the price ("" for the
// price).
func (o *Origin) SetCharge(c string) { o.mu.Lock(); o.charge = c; o.mu.Unlock() }

// OnAsked sets f to run after each 402 that asks the price (to change the
// price between a 402 and its retry).
func (o *Origin) OnAsked(f func()) { o.mu.Lock(); o.asked = f; o.mu.Unlock() }

// SetChargeAsking makes every 402 that asks the price also carry
// crawler-charged c (a hostile origin; "" for none).
func (o *Origin) SetChargeAsking(c string) { o.mu.Lock(); o.chargeAsking = c; o.mu.Unlock() }

// SetHangPaid makes a paid request (a price agreed) count as paid and
// charged, and then never be answered: the origin holds it until the
// client goes away (a hostile or failing origin, or a client that left).
func (o *Origin) SetHangPaid(hang bool) { o.mu.Lock(); o.hangPaid = hang; o.mu.Unlock() }

// Charged returns what the origin charged in total, per currency
// (crawler-charged values it sent, and those of paid requests it held).
func (o *Origin) Charged() map[string]payments.Amount {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := map[string]payments.Amount{}
	for k, v := range o.chargedSum {
		m[k] = v
	}
	return m
}

// addCharge adds the value c to the origin's total. o.mu is held.
func (o *Origin) addCharge(c string) {
	p, err := payments.ParsePrice(c)
	if err != nil {
		return
	}
	if o.chargedSum == nil {
		o.chargedSum = map[string]payments.Amount{}
	}
	o.chargedSum[p.Currency] += p.Amount
}

// Paid returns the number of paid answers.
func (o *Origin) Paid() int { o.mu.Lock(); defer o.mu.Unlock(); return o.paid }

// Bodies returns the request bodies of the paid requests.
func (o *Origin) Bodies() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.bodies...)
}

// Headers returns the header fields of every request received.
func (o *Origin) Headers() []http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]http.Header(nil), o.headers...)
}

func (o *Origin) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.mu.Lock()
	o.headers = append(o.headers, r.Header.Clone())
	price, charge, asked, chargeAsking, hang := o.price, o.charge, o.asked, o.chargeAsking, o.hangPaid
	o.mu.Unlock()
	if f, ok := o.Files[r.URL.Path]; ok {
		_, _ = io.WriteString(w, strings.ReplaceAll(f, "HOST", r.Host))
		return
	}
	switch r.URL.Path {
	case PathFree, "/robots.txt":
		_, _ = io.WriteString(w, Body)
		return
	case PathForbidden:
		fail(w, http.StatusForbidden, ErrCrawlerForbidden)
		return
	case PathBadPrice:
		w.Header().Set("crawler-price", "0.01 dollars")
		fail(w, http.StatusPaymentRequired, ErrInvalidContentPrice)
		return
	}
	if o.Check != nil && o.Check(r) != nil {
		fail(w, http.StatusBadRequest, ErrInvalidSignature)
		return
	}
	exact, max := r.Header.Get("crawler-exact-price"), r.Header.Get("crawler-max-price")
	status, code := decide(price, exact, max)
	switch {
	case status == http.StatusOK && r.URL.Path == PathPaymentFailed:
		fail(w, http.StatusForbidden, ErrPaymentFailed)
	case status == http.StatusOK:
		if charge == "" {
			charge = price
		}
		o.mu.Lock()
		o.paid++
		o.bodies = append(o.bodies, string(body))
		o.addCharge(charge)
		o.mu.Unlock()
		if hang {
			<-r.Context().Done()
			panic(http.ErrAbortHandler) // no answer: the connection closes
		}
		w.Header().Set("crawler-charged", charge)
		_, _ = io.WriteString(w, Body)
	case status == http.StatusPaymentRequired:
		w.Header().Set("crawler-price", price)
		if chargeAsking != "" {
			o.mu.Lock()
			o.addCharge(chargeAsking)
			o.mu.Unlock()
			w.Header().Set("crawler-charged", chargeAsking)
		}
		fail(w, status, code)
		if asked != nil {
			asked()
		}
	default:
		fail(w, status, code)
	}
}

// decide applies the documented rules to the price headers of a request.
func decide(price, exact, max string) (status int, code string) {
	current, _ := payments.ParsePrice(price)
	switch {
	case exact != "" && max != "":
		return http.StatusBadRequest, ErrConflictingPriceHeaders
	case exact == "" && max == "":
		return http.StatusPaymentRequired, "" // the first ask carries no error
	case exact != "":
		p, err := payments.ParsePrice(exact)
		if err != nil {
			return http.StatusBadRequest, ErrInvalidCrawlerPriceValue
		}
		if p != current {
			return http.StatusPaymentRequired, ErrInvalidCrawlerExactPrice
		}
	default:
		p, err := payments.ParsePrice(max)
		if err != nil {
			return http.StatusBadRequest, ErrInvalidCrawlerPriceValue
		}
		if p.Currency != current.Currency || p.Amount < current.Amount {
			return http.StatusPaymentRequired, ErrInvalidCrawlerMaxPrice
		}
	}
	return http.StatusOK, ""
}

// fail answers status with crawler-error code (none when code is "").
func fail(w http.ResponseWriter, status int, code string) {
	if code != "" {
		w.Header().Set("crawler-error", code)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, strings.ToLower(http.StatusText(status))+"\n")
}
