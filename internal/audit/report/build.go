package report

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit/site"
)

// maxTokenSeries is how many tokens get a decisions-over-time series.
const maxTokenSeries = 8

// build turns the aggregator's state into the report, top rows a section
// (0: all tracked).
func (a *aggregator) build(top int) *Report {
	a.settle()
	r := &Report{Version: SchemaVersion}
	r.Summary = a.summary()
	r.Tokens = section(a.tokens, top, tokenRow)
	r.Violations = section(a.violations, top, violationRow)
	r.Hosts = section(a.hostT, top, hostRow)
	r.Rules = section(a.rules, top, ruleRow)
	r.DeniedURLs = section(a.urls, top, urlRow)
	r.Spend = a.buildSpend(top)
	r.Timelines = a.timelines(r.Tokens.Rows)
	return r
}

func (a *aggregator) summary() Summary {
	s := Summary{
		Lines: a.lines, Requests: a.counted, Filtered: a.filtered, FieldsCut: a.cut,
		Skipped: a.skips.n, FirstSkipped: a.skips.first, SkippedBy: a.skips.byWhy,
		InputErrors: a.skips.errors, MoreInputErrors: a.skips.nErr - len(a.skips.errors),
		Decisions: a.decisions.counts(), Reasons: a.reasons.counts(),
		AccessResults: a.access.counts(), TokenSources: a.sources.counts(),
	}
	s.DistinctHosts, s.DistinctHostsExact = a.hosts.count()
	if a.counted > 0 {
		f, l := utc(a.first), utc(a.last)
		s.First, s.Last, s.DurationSeconds = &f, &l, a.last-a.first
	}
	return s
}

func utc(ts int64) time.Time { return time.Unix(ts, 0).UTC() }

// section renders a top-k table: its heaviest top rows (0: all).
func section[P, R any](t *topK[P], top int, row func(e *topEntry[P]) R) Section[R] {
	s := Section[R]{Capacity: t.capacity, BoundHit: t.full(), Rows: []R{},
		Tracked: len(t.entries), ByteBudget: t.budget, Bytes: t.used, ByteBoundHit: t.byBytes > 0}
	s.Distinct, s.DistinctExact = t.distinct.count()
	entries := t.sorted()
	if top > 0 && len(entries) > top {
		entries = entries[:top]
	}
	for _, e := range entries {
		s.Rows = append(s.Rows, row(e))
	}
	if s.Distinct > uint64(len(s.Rows)) {
		s.MoreNotShown = s.Distinct - uint64(len(s.Rows))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func tokenRow(e *topEntry[tokenStats]) TokenRow {
	p := &e.p
	r := TokenRow{
		Token: orNone(e.key), Requests: e.count, Error: e.err,
		Allowed: p.byClass[classAllowed], DeniedByRule: p.byClass[classDeniedRule],
		WouldDeny: p.byClass[classWouldDeny], DeniedUnreachable: p.byClass[classDeniedUnreachable],
		OtherRefusals: p.byClass[classOtherRefusal], NotDecided: p.byClass[classNotDecided],
		Sources: map[string]uint64{},
	}
	r.DistinctHosts, r.DistinctHostsExact = p.hosts.count()
	var names []string
	for i, n := range p.sources {
		if n > 0 {
			r.Sources[tokenSources[i]] = n
			names = append(names, tokenSources[i])
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return r.Sources[names[i]] > r.Sources[names[j]] })
	r.Source = strings.Join(names, "+")
	return r
}

func violationRow(e *topEntry[violation]) ViolationRow {
	f := strings.SplitN(e.key, "\x00", 7)
	for len(f) < 7 {
		f = append(f, "") // a key cut at maxKeyLen
	}
	line, _ := strconv.ParseInt(f[3], 10, 64)
	return ViolationRow{
		Token: orNone(f[0]), Host: string(site.AppendHost(nil, []byte(f[1]))), Origin: f[1], RobotsURL: f[2], RuleLine: line,
		RobotsSHA256: f[4], Reason: f[5], Rule: f[6], Count: e.count, Error: e.err,
		FirstSeen: utc(e.p.first), LastSeen: utc(e.p.last),
	}
}

func hostRow(e *topEntry[hostStats]) HostRow {
	p := e.p // a copy: closing the open spell must not change the table
	r := HostRow{
		Host: orNone(string(site.AppendHost(nil, []byte(e.key)))), Origin: orNone(e.key), Authority: site.Of([]byte(e.key)).Authority,
		Requests: e.count, Error: e.err,
		Denied: p.denied, WouldDeny: p.wouldDeny,
		Successful: p.access[slotSuccessful], Unavailable: p.access[slotUnavailable],
		Unreachable: p.access[slotUnreachable], UnreachableSpells: p.spells,
		UnreachableAtEnd: p.inSpell, LastRobotsSHA256: p.lastSHA,
	}
	if p.inSpell {
		p.endSpell()
	}
	r.UnreachableSeconds = p.unreachableSecs
	r.RobotsVersions, _ = p.versions.count()
	return r
}

func ruleRow(e *topEntry[ruleStats]) RuleRow {
	f := strings.SplitN(e.key, "\x00", 3)
	for len(f) < 3 {
		f = append(f, "")
	}
	line, _ := strconv.ParseInt(f[1], 10, 64)
	return RuleRow{
		RobotsURL: f[0], Rule: f[2], RuleLine: line, Requests: e.count, Error: e.err,
		Allowed: e.p.allowed, Denied: e.p.denied, WouldDeny: e.p.wouldDeny,
	}
}

func urlRow(e *topEntry[urlStats]) URLRow {
	return URLRow{URL: e.key, Denials: e.count, Denied: e.p.denied, WouldDeny: e.p.wouldDeny, Error: e.err}
}

// timelines puts the global and the shown tokens' timelines on one grid.
func (a *aggregator) timelines(rows []TokenRow) Timelines {
	var toks []*topEntry[tokenStats]
	for _, e := range a.tokens.sorted() {
		if len(toks) == maxTokenSeries || len(toks) == len(rows) {
			break
		}
		toks = append(toks, e)
	}
	all := []*timeline{&a.decTL, &a.accTL}
	for _, e := range toks {
		all = append(all, &e.p.tl)
	}
	g := commonGrid(all...)
	t := Timelines{BucketSeconds: g.Width, Buckets: g.N, Tokens: []TokenSeries{}}
	if g.N > 0 {
		s := utc(g.Origin)
		t.Start = &s
	}
	d := a.decTL.on(g)
	t.Decisions = map[string][]uint64{
		"allowed": slotColumn(d, slotAllowed), "denied": slotColumn(d, slotDenied),
		"would_deny": slotColumn(d, slotWouldDeny), "not_decided": slotColumn(d, slotNotDecided),
	}
	ac := a.accTL.on(g)
	t.Access = map[string][]uint64{
		"successful": slotColumn(ac, slotSuccessful), "unavailable": slotColumn(ac, slotUnavailable),
		"unreachable": slotColumn(ac, slotUnreachable),
	}
	for _, e := range toks {
		b := e.p.tl.on(g)
		t.Tokens = append(t.Tokens, TokenSeries{Token: orNone(e.key),
			Allowed: slotColumn(b, slotAllowed), Denied: slotColumn(b, slotDenied), WouldDeny: slotColumn(b, slotWouldDeny)})
	}
	return t
}

func slotColumn(b [][4]uint64, slot int) []uint64 {
	out := make([]uint64, len(b))
	for i := range b {
		out[i] = b[i][slot]
	}
	return out
}
