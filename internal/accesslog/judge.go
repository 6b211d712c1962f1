package accesslog

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
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
	crawlers map[crawlerKey]*crawlerState
	credits  map[creditKey]string // see credit
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
		crawlers: map[crawlerKey]*crawlerState{},
		credits:  map[creditKey]string{},
	}
	a.res.Summary.Versions = o.History.Len()
	a.res.Summary.Catalogue = a.ident.Catalogue().Version()
	a.res.Summary.BrowserFamilies = a.ident.BrowserFamilies()
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
	id := a.ident.Recognise(string(e.UserAgent))
	switch {
	case id.Client == identity.ClientBrowser:
		sum.Browsers++ // a person's browser: never judged
		return nil
	case id.Source == policy.SourceDefault:
		sum.Unnamed++ // no product token to judge under
		return nil
	}
	class := id.Client.String() // ClassCrawler or ClassOther
	if id.Client == identity.ClientOther {
		sum.OtherClients++
	}
	token, err := a.credit(string(e.UserAgent), id, e.Time)
	if err != nil {
		return err
	}
	cs := a.crawler(class, token)
	if cs.c.Requests == 0 {
		cs.c.Catalogue = a.catalogueOf(id, token)
	}
	cs.c.Requests++
	day := a.day(cs, e.Time)
	f := Finding{File: file, Line: line, Time: e.Time, ProductToken: token, Class: class}
	if verdict := a.verify(ctx, id.Identity, string(e.Client)); verdict != "" {
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
// verifier knows, else for the first whose leading part before a "-" it
// knows (Googlebot-Mobile and Googlebot-Image are checked against
// Googlebot's ranges), "" when it knows none.
func (a *Auditor) verify(ctx context.Context, id identity.Identity, client string) string {
	for _, c := range id.Candidates {
		if a.o.Verifier.Claims(c) {
			return a.o.Verifier.Verify(ctx, c, client)
		}
	}
	for _, c := range id.Candidates {
		if head, _, ok := strings.Cut(c, "-"); ok && a.o.Verifier.Claims(head) {
			return a.o.Verifier.Verify(ctx, head, client)
		}
	}
	return ""
}

// catalogueOf is what the crawler catalogue says of the crawler credited
// as token, nil when its entry does not name it so: the entry that
// recognised it, with ai.robots.txt's operator, function and respect when
// that list names it too.
func (a *Auditor) catalogueOf(id identity.Recognition, token string) *CatalogueEntry {
	k := id.Known()
	if k == nil || !slices.ContainsFunc(k.Names, func(n string) bool { return strings.EqualFold(n, token) }) {
		return nil
	}
	e := &CatalogueEntry{Source: k.Source, Tags: k.Tags, URL: k.URL, Operator: k.Operator, Function: k.Function, Respect: k.Respect}
	if ai := a.ident.Catalogue().NameEntry(token); ai != nil && e.Operator == "" {
		e.Operator, e.Function, e.Respect = ai.Operator, ai.Function, ai.Respect
	}
	return e
}

// creditKey is a User-Agent header and the robots.txt version in force.
type creditKey struct {
	ua      string
	version int
}

// maxCredits bounds the credits remembered.
const maxCredits = 8192

// credit returns the name a request is credited to: the identity's token
// when the crawler catalogue named it, or when the header gives one
// candidate; else the first candidate that a group of the robots.txt
// version in force at t names (the candidate whose group decides:
// "Device/1.0 (compatible; Foo/2.0)" is Foo on a site that names Foo),
// else the token. A device or platform product that comes first in the
// header is so never credited over the crawler the site names.
func (a *Auditor) credit(ua string, id identity.Recognition, t time.Time) (string, error) {
	if k := id.Known(); len(id.Candidates) < 2 || k != nil && slices.ContainsFunc(k.Names, func(n string) bool { return strings.EqualFold(n, id.Token) }) {
		return id.Token, nil
	}
	h := a.o.History
	_, v, _ := h.window(t, t)
	if v < 0 {
		return id.Token, nil
	}
	k := creditKey{ua, v}
	if c, ok := a.credits[k]; ok {
		return c, nil
	}
	l, err := h.get(v)
	if err != nil {
		return "", err
	}
	c := id.Token
	if !l.absent {
		for _, cand := range id.Candidates {
			if vd := l.access.Robots.Test("/", cand); vd.Agent != "" && !vd.Fallback {
				c = cand
				break
			}
		}
	}
	if len(a.credits) >= maxCredits {
		clear(a.credits)
	}
	a.credits[k] = c
	return c, nil
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
	return policy.DecideAccess(nil, path, cands).Reason == auditlog.ReasonImplicit
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
