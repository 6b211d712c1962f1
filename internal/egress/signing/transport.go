package signing

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress"
)

// Transport is the signing egress step: an http.RoundTripper that signs
// each request the proxy forwards (one carrying an egress.Exchange) with
// the active key of its identity's Agent, records the keyid and created
// time in the Exchange's Record, and hands the request to Next.
//
// A request without an Exchange (not forwarded by the proxy), or whose
// identity has no Agent, or sent while no Settings are stored, passes
// unsigned. A request that cannot be signed (a body over MaxBodyBytes, a
// client's field we cannot add to) is not sent: RoundTrip returns the
// error, which the proxy answers with 502, and records its cause
// (ErrorCause) in the Record's SigningError.
//
// The Settings sit behind an atomic pointer: Store swaps them (a reload)
// while requests are in flight; each request signs with the Settings it
// loaded first.
type Transport struct {
	// Next carries the signed request on (the proxy's transport).
	Next http.RoundTripper
	// Rand supplies nonces; nil means crypto/rand.
	Rand io.Reader
	// Now is the clock of the created parameter; nil means time.Now.
	Now func() time.Time

	settings atomic.Pointer[Settings]
}

// NewTransport returns a Transport around next signing with s.
func NewTransport(next http.RoundTripper, s *Settings) *Transport {
	t := &Transport{Next: next}
	t.Store(s)
	return t
}

// Store makes s the settings in force (nil: sign nothing).
func (t *Transport) Store(s *Settings) { t.settings.Store(s) }

// Settings returns the settings in force, nil when none.
func (t *Transport) Settings() *Settings { return t.settings.Load() }

// RoundTrip signs req (see Transport) and sends it through Next. It does
// not modify req: the signed request is a clone.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Next == nil {
		closeBody(req)
		return nil, errors.New("signing: Transport without Next")
	}
	x := egress.Of(req)
	s := t.settings.Load()
	if x == nil || s == nil || x.ReportOnly {
		return t.Next.RoundTrip(req)
	}
	agent, ok := s.Agents.Lookup(x.Identity)
	if !ok || agent == nil {
		return t.Next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	signed, err := SignAt(out, agent, s, now(), t.Rand)
	if err != nil {
		x.Record.SigningError = ErrorCause(err)
		closeBody(req)
		return nil, err
	}
	x.Record.SignatureKeyID, x.Record.SignatureCreated = signed.KeyID, signed.Created
	return t.Next.RoundTrip(out)
}

// closeBody closes a request body a RoundTripper will not send, as the
// http.RoundTripper contract asks.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
