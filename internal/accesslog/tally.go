package accesslog

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// crawlerKey names a tally: a product token of a class.
type crawlerKey struct{ class, token string }

// crawler returns the tally of token in class, OtherCrawlers' past
// maxCrawlers.
func (a *Auditor) crawler(class, token string) *crawlerState {
	k := crawlerKey{class, token}
	if cs, ok := a.crawlers[k]; ok {
		return cs
	}
	if len(a.crawlers) >= maxCrawlers {
		k.token = OtherCrawlers
		if cs, ok := a.crawlers[k]; ok {
			return cs
		}
	}
	cs := &crawlerState{c: Crawler{Token: k.token, Class: class}, paths: map[string]int64{}, days: map[string]*Day{}}
	a.crawlers[k] = cs
	return cs
}

// day returns the crawler's timeline entry for t's UTC day, nil past
// maxDays crawler-days.
func (a *Auditor) day(cs *crawlerState, t time.Time) *Day {
	var buf [10]byte
	k := t.UTC().AppendFormat(buf[:0], time.DateOnly)
	if d, ok := cs.days[string(k)]; ok {
		return d
	}
	if a.days >= maxDays {
		return nil
	}
	a.days++
	d := &Day{Date: string(k)}
	cs.days[d.Date] = d
	return d
}

// count counts a violated path, up to maxPaths distinct paths.
func (a *Auditor) count(cs *crawlerState, p string) {
	if len(p) > maxPathLen {
		p = p[:maxPathLen] + "..."
	}
	if _, ok := cs.paths[p]; ok || a.paths < maxPaths {
		if !ok {
			a.paths++
		}
		cs.paths[p]++
	}
}

// warnings returns the warnings of the run so far: an empty log, the
// robots.txt versions that are not text, the ranges to doubt.
func (a *Auditor) warnings() []Warning {
	out := []Warning{}
	if s := a.res.Summary; s.Requests == 0 {
		out = append(out, Warning{Kind: WarnEmptyLog, Message: fmt.Sprintf(
			"no request was read: the logs hold %d lines, %d of them skipped; nothing was judged", s.Lines, s.Skipped.Total())})
	}
	out = append(out, a.o.History.warnings()...)
	return append(out, rangesWarnings(a.o.Verifier.TokenRanges(), a.first, a.last)...)
}

// Result returns the findings so far, crawlers ordered by violations,
// then requests; each crawler's top violated paths are its top n (0: all).
func (a *Auditor) Result(n int) *Result {
	r := a.res
	if !a.first.IsZero() {
		first, last := a.first, a.last
		r.Summary.First, r.Summary.Last = &first, &last
	}
	r.Summary.IPRanges = []TokenRanges{}
	for _, tr := range a.o.Verifier.TokenRanges() {
		if tr.Requests > 0 || tr.Given {
			r.Summary.IPRanges = append(r.Summary.IPRanges, tr)
		}
	}
	r.Summary.Warnings = a.warnings()
	r.Crawlers, r.OtherClients = make([]*Crawler, 0, len(a.crawlers)), []*Crawler{}
	for _, cs := range a.crawlers {
		c := cs.c
		c.TopViolated = []PathCount{}
		for p, k := range cs.paths {
			c.TopViolated = append(c.TopViolated, PathCount{p, k})
		}
		slices.SortFunc(c.TopViolated, func(x, y PathCount) int {
			if x.Count != y.Count {
				return int(y.Count - x.Count)
			}
			return strings.Compare(x.Path, y.Path)
		})
		if n > 0 && len(c.TopViolated) > n {
			c.TopViolated = c.TopViolated[:n]
		}
		c.Timeline = []Day{}
		for _, d := range cs.days {
			c.Timeline = append(c.Timeline, *d)
		}
		slices.SortFunc(c.Timeline, func(x, y Day) int { return strings.Compare(x.Date, y.Date) })
		if c.Class == ClassOther {
			r.OtherClients = append(r.OtherClients, &c)
		} else {
			r.Crawlers = append(r.Crawlers, &c)
		}
	}
	slices.SortFunc(r.Crawlers, byViolations)
	slices.SortFunc(r.OtherClients, byViolations)
	return &r
}

// byViolations orders crawlers by violations, then requests, then token.
func byViolations(x, y *Crawler) int {
	switch {
	case x.Violations != y.Violations:
		return int(y.Violations - x.Violations)
	case x.Requests != y.Requests:
		return int(y.Requests - x.Requests)
	}
	return strings.Compare(x.Token, y.Token)
}
