package check

import (
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/robots"
)

// CrawlDelay is the crawl-delay of the groups that apply (robots.GroupExtras).
type CrawlDelay struct {
	Seconds float64 `json:"seconds"`
	Line    int     `json:"line"`
}

// RequestRate is the most restrictive request rate of the groups that apply.
type RequestRate struct {
	Requests        int     `json:"requests"`
	PeriodSeconds   float64 `json:"period_seconds"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// Window is the time window "HH:MM-HH:MM", "" when none.
	Window string `json:"window,omitempty"`
	Line   int    `json:"line"`
}

// ContentUsage is what the Content-Usage rules (draft-ietf-aipref-attach-05)
// say of the URL.
type ContentUsage struct {
	// Rules are the rules that apply: those with the longest matching
	// path, none when the URL may not be crawled.
	Rules []SourceLine `json:"rules"`
	// Preferences gives, for the labels of draft-ietf-aipref-vocab-07 and
	// the -usage purpose, "y", "n" or "unknown" and the line that said it.
	Preferences map[string]Preference `json:"preferences"`
}

// SourceLine is a line of the robots.txt file.
type SourceLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Preference is a usage preference and the line of the rule that stated
// it (0 and omitted when unknown).
type Preference struct {
	Pref string `json:"pref"`
	Line int    `json:"line,omitempty"`
}

// Signal is a Content-Signal value and its line.
type Signal struct {
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// UsageResult answers -usage PURPOSE for one URL: the Content-Usage
// preference for the label PURPOSE, and the Content-Signal of that name.
type UsageResult struct {
	Purpose           string `json:"purpose"`
	ContentUsage      string `json:"content_usage"`
	ContentUsageLine  int    `json:"content_usage_line,omitempty"`
	ContentSignal     string `json:"content_signal,omitempty"`
	ContentSignalLine int    `json:"content_signal_line,omitempty"`
}

// fileExtras are the parts of the JSON result that do not depend on the
// URL: the other records of the crawler's groups and the sitemaps.
type fileExtras struct {
	extras      robots.GroupExtras
	crawlDelay  *CrawlDelay
	requestRate *RequestRate
	sitemaps    []string
	signals     map[string]Signal
}

func newFileExtras(r *robots.Robots, tokens []string) fileExtras {
	e := r.Extras(tokens...)
	f := fileExtras{extras: e, sitemaps: r.SitemapURLs()}
	if f.sitemaps == nil {
		f.sitemaps = []string{}
	}
	if d, ok := e.CrawlDelay(); ok {
		f.crawlDelay = &CrawlDelay{Seconds: d.Seconds(), Line: e.CrawlDelayLine()}
	}
	if rr, ok := e.RequestRate(); ok {
		f.requestRate = &RequestRate{Requests: rr.Requests, PeriodSeconds: rr.Period.Seconds(),
			IntervalSeconds: rr.Interval().Seconds(), Line: rr.Line}
		if rr.HasWindow {
			f.requestRate.Window = clock(rr.From) + "-" + clock(rr.To)
		}
	}
	for k, s := range e.ContentSignals() {
		if f.signals == nil {
			f.signals = map[string]Signal{}
		}
		f.signals[k] = Signal{Value: s.Value, Line: s.Line}
	}
	return f
}

// clock formats a time of day as HH:MM.
func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60)
}

// contentUsage renders the Content-Usage preferences of one URL for the
// vocabulary's labels and purpose.
func contentUsage(u robots.UsagePrefs, purpose string) ContentUsage {
	out := ContentUsage{Rules: []SourceLine{}, Preferences: map[string]Preference{}}
	for _, rule := range u.Rules() {
		out.Rules = append(out.Rules, SourceLine{Line: rule.Line, Text: rule.Text()})
	}
	labels := robots.VocabLabels()
	if purpose != "" {
		labels = append(labels, purpose)
	}
	for _, l := range labels {
		p := u.Get(l)
		out.Preferences[l] = Preference{Pref: p.Pref.String(), Line: p.Line}
	}
	return out
}

// usageResult answers -usage PURPOSE for one URL.
func (f fileExtras) usageResult(u robots.UsagePrefs, purpose string) UsageResult {
	p := u.Get(purpose)
	res := UsageResult{Purpose: purpose, ContentUsage: p.Pref.String(), ContentUsageLine: p.Line}
	if s, ok := f.extras.ContentSignal(purpose); ok {
		res.ContentSignal, res.ContentSignalLine = s.Value, s.Line
	}
	return res
}

// usageText is the text form of usageResult, a tab-separated field or
// two: "usage train-ai=n: line 4: Content-Usage: train-ai=n" and, when the
// crawler's groups have a Content-Signal of that name,
// "content-signal ai-train=no: line 3".
func (f fileExtras) usageText(u robots.UsagePrefs, purpose string) string {
	p := u.Get(purpose)
	s := "usage " + purpose + "=" + p.Pref.String()
	switch {
	case !u.Verdict.Allowed:
		s += ": none for a disallowed URL"
	case p.Line != 0:
		if rule, ok := u.RuleOf(p); ok {
			s += fmt.Sprintf(": line %d: %s", p.Line, rule.Text())
		}
	}
	if sig, ok := f.extras.ContentSignal(purpose); ok {
		s += fmt.Sprintf("\tcontent-signal %s=%s: line %d", sig.Key, sig.Value, sig.Line)
	}
	return s
}
