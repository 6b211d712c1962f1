package accesslog

import (
	"fmt"
	"strings"
	"time"
)

// Kinds of Warning: what a report warns of, besides its findings.
const (
	// WarnEmptyLog: no request was read (the logs are empty, or every
	// line was skipped).
	WarnEmptyLog = "empty_log"
	// WarnRobotsNotText: a robots.txt version is not text
	// (robots.NotText), so nothing or little could be read from it.
	WarnRobotsNotText = "robots_not_text"
	// WarnRangesDate: a token's ranges are dated (creationTime, else
	// fetch time) more than RangesDateGap away from the log's period.
	WarnRangesDate = "ranges_date"
	// WarnRangesOutside: most of a token's requests came from outside its
	// ranges, or most of those outside came from next to them.
	WarnRangesOutside = "ranges_outside"
)

// RangesDateGap is how far a ranges file's date may lie from the log's
// period (before its first request or after its last) before a report
// warns: 90 days. Operators change their crawlers' addresses over months
// (Google's files are regenerated daily, OpenAI's when they change), so
// ranges a quarter or more away from the log may not be the ones its
// crawlers used: addresses added since make real crawlers impostors,
// addresses retired since let impostors pass.
const RangesDateGap = 90 * 24 * time.Hour

// OutsideMinRequests is the fewest requests claiming a token that make a
// WarnRangesOutside warning: below it, a few impostors are no sign.
const OutsideMinRequests = 10

// Warning is something a reader of the report must know before trusting
// it, written in every format and on standard error.
type Warning struct {
	// Kind is one of the Warn* values.
	Kind string `json:"kind"`
	// Token is the product token it is about, "" for none.
	Token string `json:"product_token,omitempty"`
	// Source is the file it is about (a robots.txt version, a ranges
	// file), "" for none.
	Source string `json:"source,omitempty"`
	// Message says it in a sentence.
	Message string `json:"message"`
}

// rangesWarnings returns the warnings of each token's ranges for a log
// whose requests span [first, last] (zero when it has none).
func rangesWarnings(trs []TokenRanges, first, last time.Time) []Warning {
	var out []Warning
	for _, tr := range trs {
		if tr.Requests == 0 && !tr.Given {
			continue // not in the log: nothing of it is judged
		}
		for _, s := range tr.Sources {
			if w, ok := dateWarning(tr.Token, s, first, last); ok {
				out = append(out, w)
			}
		}
		if w, ok := outsideWarning(tr); ok {
			out = append(out, w)
		}
	}
	return out
}

// dateWarning warns when the source's date lies more than RangesDateGap
// from the period [first, last].
func dateWarning(token string, s RangesSource, first, last time.Time) (Warning, bool) {
	d := s.dated()
	if d.IsZero() || first.IsZero() {
		return Warning{}, false
	}
	what := "creationTime"
	if s.CreationTime == nil {
		what = "fetched"
	}
	var gap time.Duration
	var side string
	switch {
	case d.Before(first):
		gap, side = first.Sub(d), "before the log's first request"
	case d.After(last):
		gap, side = d.Sub(last), "after the log's last request"
	}
	if gap <= RangesDateGap {
		return Warning{}, false
	}
	return Warning{Kind: WarnRangesDate, Token: token, Source: s.Source, Message: fmt.Sprintf(
		"%s: the ranges in %s are of %s (%s), %d days %s (%s to %s): the operator's addresses may have changed in between, so %s's identity verdicts may be wrong; use ranges of the log's time",
		token, s.Source, d.UTC().Format(time.DateOnly), what, int(gap.Hours()/24), side,
		first.UTC().Format(time.DateOnly), last.UTC().Format(time.DateOnly), token)}, true
}

// outsideWarning warns when most of the token's requests came from
// outside its ranges, or most of those outside came from next to them:
// signs that the ranges are trimmed, stale or another crawler's, rather
// than that the requests are impostors'.
func outsideWarning(tr TokenRanges) (Warning, bool) {
	mostOutside := tr.Requests >= OutsideMinRequests && tr.Outside*2 > tr.Requests
	mostNear := tr.Near >= OutsideMinRequests && tr.Near*2 > tr.Outside
	if !mostOutside && !mostNear {
		return Warning{}, false
	}
	var srcs []string
	for _, s := range tr.Sources {
		srcs = append(srcs, s.Source)
	}
	msg := fmt.Sprintf("%s: %d of its %d requests came from outside its %d published prefixes (%s)", tr.Token, tr.Outside, tr.Requests,
		tr.Prefixes, strings.Join(srcs, ", "))
	if mostNear {
		msg += fmt.Sprintf(", %d of them from next to a published prefix (its /16, or /32 for IPv6): the ranges look trimmed or out of date, so these impostor verdicts are doubtful", tr.Near)
	} else {
		msg += ": either the ranges are incomplete or out of date, or most of these requests are impostors"
	}
	msg += "; -dns (forward-confirmed reverse DNS) tells them apart"
	return Warning{Kind: WarnRangesOutside, Token: tr.Token, Message: msg}, true
}
