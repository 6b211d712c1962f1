package robots

import (
	"math"
	"net/url"
	"time"
)

// GroupExtras are the other records (RFC 9309 2.2.4) of the groups that
// apply to a crawler: crawl-delay, request-rate and Content-Signal. It is
// returned by Robots.Extras and holds no memory of its own unless more than
// four Content-Signal and request-rate lines apply; returning it then
// allocates once.
type GroupExtras struct {
	// Agent is the lower-cased product token whose groups applied, "*"
	// when the catch-all group did, "" when no group did (as in Verdict).
	Agent string
	// Fallback is true when the "*" group applied.
	Fallback bool

	a string
	// delay is the largest crawl-delay, delayLine its line (0: none).
	delay     time.Duration
	delayLine int
	// rate is the most restrictive request rate (rate.Line 0: none).
	rate RequestRate
	// refs are the valid request-rate and the Content-Signal records that
	// apply, in file order.
	refs recRefs
}

// CrawlDelay returns the crawl-delay of the groups that apply and reports
// whether any of them has a valid one (see ParseCrawlDelay). When several
// merged groups (RFC 9309 2.2.1), or several lines of one group, disagree,
// the largest delay wins.
func (e GroupExtras) CrawlDelay() (time.Duration, bool) {
	return e.delay, e.delayLine != 0
}

// CrawlDelayLine returns the 1-based line of the crawl-delay record that
// CrawlDelay returns (the first in file order among equals), 0 when none.
func (e GroupExtras) CrawlDelayLine() int { return e.delayLine }

// RequestRate returns the most restrictive valid request rate of the groups
// that apply, the one with the longest Interval (the first in file order
// among equals), whatever their time windows, and reports whether there is
// one. RequestRates lists them all.
func (e GroupExtras) RequestRate() (RequestRate, bool) {
	return e.rate, e.rate.Line != 0
}

// RequestRates returns every valid request rate of the groups that apply,
// in file order, nil when none. It allocates.
func (e GroupExtras) RequestRates() []RequestRate {
	var out []RequestRate
	var v recView
	for i := 0; i < e.refs.n; i++ {
		if e.refs.view(e.a, i, &v); v.kind == recRequestRate {
			rr, _ := ParseRequestRate(v.value)
			rr.Line = v.line
			out = append(out, rr)
		}
	}
	return out
}

// Extras returns the other records of the groups that apply to a crawler
// identified by the given product tokens: the groups of every token that
// has any, merged (RFC 9309 2.2.1), else the "*" group, the groups Test
// matches against. Content-Signal lines before the first user-agent line
// apply to every crawler. Other records before the first user-agent line
// apply to none.
//
// Extras does not allocate when at most four Content-Signal and
// request-rate lines apply, and returns at once for a file that has none of
// these records.
func (r *Robots) Extras(tokens ...string) GroupExtras {
	var e GroupExtras
	if r.a == "" {
		return e // the zero Robots
	}
	var s groupSet
	r.selectGroups(tokens, &s)
	e.Agent, e.Fallback, e.a = s.agent, s.fallback, r.a
	if r.extras&(xDelay|xSignal) == 0 {
		return e
	}
	it := recIter{a: r.a, i: int(r.records)}
	var v recView
	for it.next(&v) {
		switch v.kind {
		case recCrawlDelay, recCrawlDelay2, recRequestRate, recContentSignal:
		default:
			continue
		}
		if v.group < 0 && v.kind != recContentSignal || v.group >= 0 && !s.has(v.group) {
			continue
		}
		e.add(&v)
	}
	return e
}

// add takes one record that applies into account.
func (e *GroupExtras) add(v *recView) {
	switch v.kind {
	case recContentSignal:
		e.refs.add(v.at)
	case recRequestRate:
		rr, ok := ParseRequestRate(v.value)
		if !ok {
			return
		}
		e.refs.add(v.at)
		if e.rate.Line == 0 || rr.Interval() > e.rate.Interval() {
			rr.Line = v.line
			e.rate = rr
		}
	default: // crawl-delay
		d, ok := ParseCrawlDelay(v.value)
		if ok && (e.delayLine == 0 || d > e.delay) {
			e.delay, e.delayLine = d, v.line
		}
	}
}

// ParseCrawlDelay parses the value of a crawl-delay record: a number of
// seconds written as a plain non-negative decimal number, digits with an
// optional fractional part ("10", "0.5", ".25", "2."). Signs, exponents,
// units, "inf" and "nan" are not accepted (Python's urllib.robotparser
// takes whole numbers only; Protego's float() takes all of these). Digits
// past nanoseconds are dropped; a delay too long for a time.Duration
// (about 292 years) is capped to the largest one.
func ParseCrawlDelay(v string) (time.Duration, bool) {
	const maxSec = math.MaxInt64 / int64(time.Second)
	var sec, frac int64
	digits, fracDigits, i := 0, 0, 0
	for ; i < len(v) && isDigit(v[i]); i++ {
		digits++
		if sec <= maxSec {
			sec = sec*10 + int64(v[i]-'0')
		}
	}
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && isDigit(v[i]); i++ {
			digits++
			if fracDigits < 9 {
				frac = frac*10 + int64(v[i]-'0')
				fracDigits++
			}
		}
	}
	if digits == 0 || i != len(v) {
		return 0, false
	}
	for ; fracDigits < 9; fracDigits++ {
		frac *= 10
	}
	if sec > maxSec || sec == maxSec && frac > math.MaxInt64%int64(time.Second) {
		return math.MaxInt64, true
	}
	return time.Duration(sec)*time.Second + time.Duration(frac), true
}

// SitemapURLs returns the sitemap records (file-level, RFC 9309 2.2.4) whose
// value is an absolute http or https URL with a host, in file order,
// without repeats. Other values (relative references, other schemes) are
// left out; Sitemaps lists every value as written. It allocates.
func (r *Robots) SitemapURLs() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.Sitemaps() {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}
