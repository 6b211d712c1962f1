package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// admit holds a request that is to be forwarded until politeness lets it
// start (Options.Politeness), or returns its refusal: 429 with
// Retry-After, reason crawl-delay, backoff or host-concurrency (or the 503
// of a shutdown that cut the wait short). What the answer means for the
// decision is policy.DecideAdmission's.
func (p *Proxy) admit(req *http.Request, st *state) *http.Response {
	l := p.opts.Politeness
	if l == nil {
		return nil
	}
	d := &st.decision
	st.ticket = l.Admit(req.Context(), d.PolitenessRequest())
	if policy.DecideAdmission(d, st.ticket) {
		return nil
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
	p.observeUsage(ctx.Req, st, resp)
}

// politeFields adds the politeness fields of a request to its audit line.
func politeFields(e *zerolog.Event, st *state) *zerolog.Event {
	t := st.ticket
	if t == nil {
		return e
	}
	if t.Waited > 0 || t.Refused != "" {
		e = e.Float64(auditlog.FieldWaitedMS, ms(t.Waited))
	}
	if r := st.decision.RobotsReason; r != "" {
		e = e.Str(auditlog.FieldRobotsReason, string(r))
	}
	if t.WaitCause != "" {
		e = e.Str(auditlog.FieldWaitReason, string(t.WaitCause))
	}
	if t.Delay > 0 {
		e = e.Float64(auditlog.FieldCrawlDelayMS, ms(t.Delay))
	}
	if t.Backoff > 0 {
		e = e.Float64(auditlog.FieldBackoffMS, ms(t.Backoff))
	}
	if t.Refused != "" {
		e = e.Float64(auditlog.FieldRetryAfterMS, ms(t.RetryAfter))
	}
	return e
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// politeDenialText explains a refusal for a usage preference, or for
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
