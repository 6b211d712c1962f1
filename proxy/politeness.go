package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/politeness"
)

// Audit fields of politeness (issue 11).
const (
	// FieldWaitedMS is how long politeness held the request, in
	// milliseconds (crawl delay, back-off pause, in-flight cap).
	FieldWaitedMS = "waited_ms"
	// FieldWaitReason is what held it longest: "crawl-delay", "backoff"
	// or "host-concurrency".
	FieldWaitReason = "wait_reason"
	// FieldCrawlDelayMS is the crawl delay applied to the request, in
	// milliseconds.
	FieldCrawlDelayMS = "crawl_delay_ms"
	// FieldBackoffMS is the pause the origin's answer (429, or 503 with
	// Retry-After) started for the product token at the authority, in
	// milliseconds.
	FieldBackoffMS = "backoff_ms"
	// FieldRetryAfterMS is how long a request refused with 429 was told
	// to wait (its Retry-After, before rounding up to seconds).
	FieldRetryAfterMS = "retry_after_ms"
	// FieldRobotsReason is robots.txt's reason for a request that
	// politeness held or refused (its reason is then crawl-delay, backoff
	// or host-concurrency): what audit verify re-decides.
	FieldRobotsReason = "robots_reason"
)

// admit holds a request that is to be forwarded until politeness lets it
// start (Options.Politeness), or returns its refusal: 429 with
// Retry-After, reason crawl-delay, backoff or host-concurrency (or the 503
// of a shutdown that cut the wait short). The decision's product token
// and authority are the politeness key; the crawl delay is robots.txt's for
// the token.
func (p *Proxy) admit(req *http.Request, st *state) *http.Response {
	l := p.opts.Politeness
	if l == nil {
		return nil
	}
	d := &st.decision
	r := politeness.Request{Key: politeness.Key{Token: d.Identity.Token, Authority: strings.TrimSuffix(d.RobotsURL, "/robots.txt")}}
	if d.Robots != nil {
		r.Delay, r.HasDelay = d.Robots.Extras(d.Identity.Candidates...).CrawlDelay()
	}
	t := l.Admit(req.Context(), r)
	st.ticket = t
	if t.Refused == "" {
		if t.Waited > 0 && t.WaitCause != "" {
			// Issue 11: a request held for its turn is audited with the
			// cause as its reason; robots_reason keeps robots.txt's.
			st.robotsReason, d.Reason = d.Reason, policy.Reason(t.WaitCause)
		}
		return nil
	}
	// A refusal keeps robots.txt's reason too: audit verify re-decides it.
	st.robotsReason = d.Reason
	d.Allowed, d.ReportOnly, d.Reason, d.RetryAfter = false, false, policy.Reason(t.Refused), t.RetryAfter
	if t.Err != nil {
		d.Err = t.Err
	}
	if errors.Is(context.Cause(req.Context()), ErrShutdown) {
		d.Reason = policy.ReasonShutdown
		return cutOffResponse(req)
	}
	return rejectResponse(req, d, p.opts.AuthRealm)
}

// observeOrigin reports the origin's answer to a forwarded request to
// politeness (back-off, or the success that ends one) and reads its
// Content-Usage header field. resp is the origin's response; responses the
// proxy made itself are left alone.
func (p *Proxy) observeOrigin(resp *http.Response, ctx *goproxy.ProxyCtx) {
	st, _ := ctx.UserData.(*state)
	if st == nil || resp == nil || ctx.Error != nil || !forwarded(st) {
		return
	}
	if t := st.ticket; t != nil {
		_ = p.opts.Politeness.Observe(context.WithoutCancel(ctx.Req.Context()), t, resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("Date")) // a LocalScheduler does not fail
	}
	observeUsage(st, resp)
}

// politeFields adds the politeness fields of a request to its audit line.
func politeFields(e *zerolog.Event, st *state) *zerolog.Event {
	t := st.ticket
	if t == nil {
		return e
	}
	if t.Waited > 0 || t.Refused != "" {
		e = e.Float64(FieldWaitedMS, ms(t.Waited))
	}
	if st.robotsReason != "" {
		e = e.Str(FieldRobotsReason, string(st.robotsReason))
	}
	if t.WaitCause != "" {
		e = e.Str(FieldWaitReason, string(t.WaitCause))
	}
	if t.Delay > 0 {
		e = e.Float64(FieldCrawlDelayMS, ms(t.Delay))
	}
	if t.Backoff > 0 {
		e = e.Float64(FieldBackoffMS, ms(t.Backoff))
	}
	if t.Refused != "" {
		e = e.Float64(FieldRetryAfterMS, ms(t.RetryAfter))
	}
	return e
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// politeDenialText explains a refusal of issue 11: a usage preference, or
// politeness; "" when it cannot (denialText's general text applies).
func politeDenialText(d *policy.Decision) string {
	token := d.Identity.Token
	switch d.Reason {
	case policy.ReasonUsage:
		if d.Usage == nil {
			break
		}
		return fmt.Sprintf("robotsproxy: %s refuses the purpose %q declared for product token %q (%s)\n",
			d.RobotsURL, d.Usage.Refused, token, d.Usage.Deciding)
	case policy.ReasonCrawlDelay:
		return fmt.Sprintf("robotsproxy: too early for product token %q at this site (crawl delay); retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case policy.ReasonBackoff:
		return fmt.Sprintf("robotsproxy: the origin asked product token %q to back off; retry in %d seconds\n",
			token, d.RetryAfterSeconds())
	case policy.ReasonHostConcurrency:
		return fmt.Sprintf("robotsproxy: too many requests in flight to this site; retry in %d seconds\n", d.RetryAfterSeconds())
	}
	return "" // denialText's general text
}
