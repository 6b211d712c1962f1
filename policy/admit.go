package policy

import (
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// PolitenessRequest returns what politeness admits a request decided as d
// by: the key of its product token and authority (robots.txt's URL
// without /robots.txt, so every spelling of one authority is one key),
// and the crawl delay robots.txt states for the token.
func (d *Decision) PolitenessRequest() politeness.Request {
	return politeness.Request{
		Key:   politeness.Key{Token: d.Identity.Token, Authority: strings.TrimSuffix(d.RobotsURL, "/robots.txt")},
		Delay: d.CrawlDelay, HasDelay: d.HasCrawlDelay,
	}
}

// DecideAdmission is the politeness step of a decision to forward a
// request (allowed, or denied in report mode): it records in d the
// answer t of politeness.Limiter.Admit for d.PolitenessRequest(), and
// reports whether the request may go ahead.
//
//   - Admitted after waiting for its turn: d keeps its verdict, and its
//     reason becomes the wait's cause (crawl-delay, backoff or
//     host-concurrency); robots.txt's reason moves to d.RobotsReason.
//   - Refused: d is denied, enforced whatever the mode (ReportOnly
//     false), with the refusal's cause as its reason, t.RetryAfter and
//     t.Err (when set); robots.txt's reason moves to d.RobotsReason, so
//     audit verify re-decides it.
//   - Admitted at once, or t nil (no politeness): d is unchanged.
func DecideAdmission(d *Decision, t *politeness.Ticket) bool {
	if t == nil {
		return true
	}
	if t.Refused == "" {
		if t.Waited > 0 && t.WaitCause != "" {
			d.RobotsReason, d.Reason = d.Reason, Reason(t.WaitCause)
		}
		return true
	}
	d.RobotsReason = d.Reason
	d.Allowed, d.ReportOnly, d.Reason, d.RetryAfter = false, false, Reason(t.Refused), t.RetryAfter
	if t.Err != nil {
		d.Err = t.Err
	}
	return false
}
