package accesslog

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
)

// CacheWindow is how long a crawler may use a cached robots.txt: RFC 9309
// 2.4 ("Crawlers SHOULD NOT use the cached version for more than 24
// hours, unless the robots.txt file is unreachable").
const CacheWindow = 24 * time.Hour

// Limits on what an Auditor tracks, so that memory stays bounded whatever
// the log holds.
const (
	// maxCrawlers is the most product tokens tracked one by one; the
	// rest are counted under OtherCrawlers.
	maxCrawlers = 10000
	// maxPaths is the most distinct violated paths counted, over all
	// crawlers, and maxPathLen the longest counted whole (a longer one is
	// counted by its first maxPathLen octets and "...").
	maxPaths   = 50000
	maxPathLen = 256
	// maxDays is the most crawler-days in the timelines, over all crawlers.
	maxDays = 100000
)

// OtherCrawlers is the Crawler.Token the crawlers past the first 10,000
// are counted under.
const OtherCrawlers = "(other crawlers)"

// Options configure an Auditor.
type Options struct {
	// History is the site's robots.txt history (LoadHistory); required.
	History *History
	// Verifier verifies claimed identities; nil verifies none.
	Verifier *Verifier
	// NewParser returns the parser of the log format; nil is Combined.
	NewParser func() Parser
	// TempDir holds the findings while a log is read ("" is the system's
	// temporary directory), so that memory stays bounded.
	TempDir string
}

// Auditor judges access logs. Feed it logs with Read, in time order, then
// take the Result. Not safe for concurrent use.
type Auditor struct {
	o        Options
	paths    int // distinct violated paths counted
	first    time.Time
	last     time.Time
	days     int // crawler-days in the timelines
	ident    *identity.Identifier
	crawlers map[string]*crawlerState
	res      Result
}

type crawlerState struct {
	c         Crawler
	lastFetch time.Time // zero: none seen
	paths     map[string]int64
	days      map[string]*Day
}

// New returns an Auditor; an error when o.History is nil.
func New(o Options) (*Auditor, error) {
	if o.History == nil {
		return nil, errors.New("audit access log: no robots.txt history")
	}
	if o.Verifier == nil {
		o.Verifier = &Verifier{}
	}
	if o.NewParser == nil {
		o.NewParser = func() Parser { return &Combined{} }
	}
	a := &Auditor{
		o:        o,
		ident:    identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), // as check identifies
		crawlers: map[string]*crawlerState{},
	}
	a.res.Summary.Versions = o.History.Len()
	var err error
	if a.res.skipped, err = newSpill[SkippedLine](o.TempDir); err != nil {
		return nil, err
	}
	a.res.lists = map[string]*findingList{}
	for _, k := range Kinds() {
		l, err := newFindingList(o.TempDir)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.res.lists[k] = l
	}
	return a, nil
}

// judge decides one request.
func (a *Auditor) judge(ctx context.Context, file string, line int64, e *Entry) error {
	sum := &a.res.Summary
	sum.Requests++
	if a.first.IsZero() || e.Time.Before(a.first) {
		a.first = e.Time
	}
	if e.Time.After(a.last) {
		a.last = e.Time
	}
	id := a.ident.Identify(string(e.UserAgent))
	if id.Source == identity.SourceDefault {
		sum.Browsers++ // no crawler named: never a violation
		return nil
	}
	cs := a.crawler(id.Token)
	cs.c.Requests++
	day := a.day(cs, e.Time)
	f := Finding{File: file, Line: line, Time: e.Time, ProductToken: id.Token}
	if verdict := a.verify(ctx, id, string(e.Client)); verdict != "" {
		f.Identity = verdict
		switch verdict {
		case Verified:
			cs.c.Verified++
		case Unverified:
			cs.c.Unverified++
		case Impostor:
			cs.c.Impostor++
			f = fill(f, e)
			return a.res.lists[KindImpostor].add(&f) // not the crawler it claims: neither judged nor its fetches counted
		}
	}
	if day != nil {
		day.Requests++
	}
	return a.decide(cs, day, f, e, id.Candidates)
}

// verify returns the identity verdict for the first candidate token the
// verifier knows, "" when it knows none.
func (a *Auditor) verify(ctx context.Context, id identity.Identity, client string) string {
	for _, c := range id.Candidates {
		if a.o.Verifier.Claims(c) {
			return a.o.Verifier.Verify(ctx, c, client)
		}
	}
	return ""
}

// decide judges a crawler's request against every robots.txt version it
// could legitimately have been using (RFC 9309 2.4): those in force
// during the 24 hours before it, or since its last fetch of /robots.txt
// when that is later. Every version disallowing it makes a violation,
// some a disputable request; the deciding version is the one in force at
// the request (violation) or the latest that disallows it (disputable).
func (a *Auditor) decide(cs *crawlerState, day *Day, f Finding, e *Entry, cands []string) error {
	path := policy.RequestPath(string(e.Target))
	start, basis := e.Time.Add(-CacheWindow), "24h"
	if !cs.lastFetch.IsZero() && cs.lastFetch.After(start) && !cs.lastFetch.After(e.Time) {
		start, basis = cs.lastFetch, "robots-fetch"
	}
	if namesRobotsTxt(path, cands) {
		a.fetched(cs, e)
		return nil
	}
	h := a.o.History
	lo, hi, unknown := h.window(start, e.Time)
	if hi < 0 {
		a.res.Summary.Unjudged++
		return nil
	}
	considered, deny, decider := hi-lo+1, 0, -1
	if unknown {
		considered++
	}
	var dd policy.Decision
	for i := hi; i >= lo; i-- {
		l, err := h.get(i)
		if err != nil {
			return err
		}
		if l.absent {
			continue // no robots.txt: unavailable, allowed (RFC 9309 2.3.1.3)
		}
		d := policy.DecideAccess(&l.access, path, cands)
		if !d.Allowed {
			deny++
			if decider < 0 {
				decider, dd = i, d
			}
		}
	}
	if deny == 0 {
		return nil
	}
	f = fill(f, e)
	f.WindowStart, f.WindowBasis = &start, basis
	f.VersionsConsidered, f.VersionsDisallowing = considered, deny
	a.evidence(&f, decider, &dd)
	if deny == considered {
		cs.c.Violations++
		a.count(cs, f.Path)
		if day != nil {
			day.Violations++
		}
		return a.res.lists[KindViolation].add(&f)
	}
	cs.c.Disputable++
	if day != nil {
		day.Disputable++
	}
	return a.res.lists[KindDisputable].add(&f)
}

// namesRobotsTxt reports whether the decider reads path as /robots.txt
// (RFC 9309 2.2.2), asking it only when the path could name it.
func namesRobotsTxt(path string, cands []string) bool {
	if !strings.Contains(path, "robots.txt") && strings.IndexByte(path, '%') < 0 {
		return false
	}
	return policy.DecideAccess(nil, path, cands).Reason == policy.ReasonImplicit
}

// fetched records a crawler's request for /robots.txt: one answered
// with a server error (5xx) refreshes nothing, as the crawler keeps its
// cached copy (RFC 9309 2.3.1.4, 2.4).
func (a *Auditor) fetched(cs *crawlerState, e *Entry) {
	cs.c.RobotsFetches++
	if e.Status >= 500 {
		return
	}
	if e.Time.After(cs.lastFetch) {
		cs.lastFetch = e.Time
	}
}

// evidence sets the deciding version's rule, hash and validity on f.
func (a *Auditor) evidence(f *Finding, i int, d *policy.Decision) {
	h := a.o.History
	v := h.Version(i)
	f.RobotsSHA256 = hex.EncodeToString(d.RobotsSHA256[:])
	f.RobotsSource = v.Source
	if !v.From.IsZero() {
		t := v.From
		f.RobotsFrom = &t
	}
	if u := h.Until(i); !u.IsZero() {
		f.RobotsUntil = &u
	}
	f.Group = d.Verdict.Agent
	if d.Verdict.Fallback {
		f.Group = "*"
	}
	if r := d.Rule(); r != nil {
		f.Rule, f.RuleLine = r.Text(), r.Line
	}
	f.PathResolved = d.ResolvedPath
}

// fill copies the request's fields into f.
func fill(f Finding, e *Entry) Finding {
	f.Client, f.Method, f.UserAgent = string(e.Client), string(e.Method), string(e.UserAgent)
	f.Path, f.Status = string(e.Target), e.Status
	return f
}

// Close releases the findings' temporary files; the Result is unusable
// after it.
func (a *Auditor) Close() error {
	var err error
	for _, l := range a.res.lists {
		if l != nil {
			err = errors.Join(err, l.close())
		}
	}
	if a.res.skipped != nil {
		err = errors.Join(err, a.res.skipped.close())
	}
	return err
}
