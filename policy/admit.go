package policy

import (
	"context"
	"strings"
	"time"
)

// Politeness spaces and pauses the requests a policy lets through: the
// Crawl-delay a robots.txt group asks for, the back-off an origin asks
// for with 429 or 503 and Retry-After, and a cap on the requests in
// flight per authority (the robotsproxy server's is configured by
// politeness.*). Implementations are safe for concurrent use.
type Politeness interface {
	// Admit holds the request until it may start, or refuses it, and
	// returns its Ticket; never nil.
	Admit(ctx context.Context, r PolitenessRequest) Ticket
	// Observe reports the origin's answer to the request t admitted:
	// its status and its Retry-After and Date field values. A 429, or a
	// 503 with Retry-After, pauses t's key (Admission.Backoff); another
	// answer below 500 ends a pause that is over.
	Observe(ctx context.Context, t Ticket, status int, retryAfter, date string) error
}

// PolitenessKey names the requests that politeness spaces and pauses
// together: one product token's at one site.
type PolitenessKey struct {
	// Token is the crawler's product token, as decided.
	Token string
	// Authority is the site, as Origin writes it ("https://example.com",
	// "http://example.com:8080"): every spelling of one authority is one
	// key, and http and https are separate sites.
	Authority string
}

// PolitenessRequest is what politeness admits a request by.
type PolitenessRequest struct {
	// Key is the request's product token and site.
	Key PolitenessKey
	// Delay is the robots.txt crawl delay for the token, valid when
	// HasDelay.
	Delay time.Duration
	// HasDelay is false when robots.txt gives no crawl delay for the
	// token, or was not read.
	HasDelay bool
}

// Ticket is politeness's answer for one request. The caller holds it
// while the request is forwarded, reports the origin's answer (Observe)
// and releases it once the response is done, refused or not.
type Ticket interface {
	// Answer is what politeness did with the request; it stays the
	// ticket's, and Observe may still set its Backoff.
	Answer() *Admission
	// Release gives back the request's in-flight slot and ends its turn;
	// calling it again does nothing.
	Release()
	// Paced reports whether the request's sends must be reported: a
	// crawl delay applies and is counted from the moment the request is
	// sent. The caller then calls Sending just before each write that
	// begins the request on a connection to the origin, and Wrote just
	// after that write returns.
	Paced() bool
	// Sending is called just before the request's first octet is written
	// to the origin's connection; an error means it must not be (its turn
	// ended unsent).
	Sending() error
	// SendingUnreported is Sending for a connection that cannot tell when
	// it writes: the request counts as sent at Wrote (the origin's first
	// response octet), or at Release.
	SendingUnreported() error
	// Wrote is called right after the write Sending allowed returns.
	Wrote()
}

// Admission is what politeness did with one request to be forwarded: the
// audit line's waited_ms, wait_reason, crawl_delay_ms, backoff_ms and
// retry_after_ms.
type Admission struct {
	// Waited is how long the request was held before it was admitted or
	// refused.
	Waited time.Duration
	// WaitCause is what held it longest (auditlog.ReasonCrawlDelay,
	// ReasonBackoff or ReasonHostConcurrency); "" when it did not wait.
	WaitCause Reason
	// Refused is the cause of a refusal, one of the same reasons; "" when
	// the request may go ahead.
	Refused Reason
	// RetryAfter is how long a refused request should wait before it
	// tries again.
	RetryAfter time.Duration
	// Err explains a refusal that was no plain "too early": the client
	// went away, or the shared state could not be read.
	Err error
	// Delay is the crawl delay applied to the request, 0 for none.
	Delay time.Duration
	// Backoff is the pause the origin's answer started (see
	// Politeness.Observe), 0 for none.
	Backoff time.Duration
}

// PolitenessRequest returns what politeness admits a request decided as d
// by: the key of its product token and site (robots.txt's URL without
// /robots.txt, so every spelling of one authority is one key), and the
// crawl delay robots.txt states for the token.
func (d *Decision) PolitenessRequest() PolitenessRequest {
	return PolitenessRequest{
		Key:   PolitenessKey{Token: d.Identity.Token, Authority: strings.TrimSuffix(d.RobotsURL, "/robots.txt")},
		Delay: d.CrawlDelay, HasDelay: d.HasCrawlDelay,
	}
}

// Admit is the politeness step of a decision to forward a request
// (allowed, or denied in report mode): it has Options.Politeness admit
// the request decided as d, records the answer in d (DecideAdmission),
// and returns the Ticket, nil without politeness, with whether the
// request may go ahead. ctx bounds the wait. The caller holds the ticket
// as Ticket says, whether the request went ahead or not.
func (p *Policy) Admit(ctx context.Context, d *Decision) (Ticket, bool) {
	if p.opts.Politeness == nil {
		return nil, true
	}
	t := p.opts.Politeness.Admit(ctx, d.PolitenessRequest())
	return t, DecideAdmission(d, t.Answer())
}

// DecideAdmission records in d politeness's answer a for the request
// decided as d, and reports whether the request may go ahead.
//
//   - Admitted after waiting for its turn: d keeps its verdict, and its
//     reason becomes the wait's cause (crawl-delay, backoff or
//     host-concurrency); robots.txt's reason moves to d.RobotsReason.
//   - Refused: d is denied, enforced whatever the mode (ReportOnly
//     false), with the refusal's cause as its reason, a.RetryAfter and
//     a.Err (when set); robots.txt's reason moves to d.RobotsReason, so
//     audit verify re-decides it.
//   - Admitted at once, or a nil (no politeness): d is unchanged.
func DecideAdmission(d *Decision, a *Admission) bool {
	if a == nil {
		return true
	}
	if a.Refused == "" {
		if a.Waited > 0 && a.WaitCause != "" {
			d.RobotsReason, d.Reason = d.Reason, a.WaitCause
		}
		return true
	}
	d.RobotsReason = d.Reason
	d.Allowed, d.ReportOnly, d.Reason, d.RetryAfter = false, false, a.Refused, a.RetryAfter
	if a.Err != nil {
		d.Err = a.Err
	}
	return false
}
