package report

import (
	"slices"
	"strconv"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit/site"
)

// Bounds are the capacities of the report's top-k tables (see topK), in
// entries and in octets. The zero value of a field means its default.
type Bounds struct {
	Tokens     int // entries; default 1000
	Hosts      int // entries; default 10000
	Violations int // entries; default 20000
	Rules      int // entries; default 5000
	URLs       int // entries; default 5000
	// SpendIdentities and SpendHosts bound the spend tables (pay per
	// crawl), entries; defaults 1000 and 10000.
	SpendIdentities int
	SpendHosts      int
	// Bytes bounds the octets the seven tables account (keys, payloads
	// and per-entry overhead; see topK), default DefaultBudget. It is
	// split in 32nds: tokens 4, hosts 8, violations 8, rules 6, URLs 5,
	// spend 1 (half per identity, half per host; see shareOf); each table
	// takes at least 64 KiB.
	Bytes int64
}

// DefaultBudget is the default of Bounds.Bytes: 48 MiB.
const DefaultBudget = 48 << 20

// Table shares of Bounds.Bytes, in 32nds.
const (
	shareTokens     = 4
	shareHosts      = 8
	shareViolations = 8
	shareRules      = 6
	shareURLs       = 5
	shareSpend      = 1 // half each for the identity and the host table
)

// shareOf is a table's part of the budget: 32nds of it.
func (b Bounds) shareOf(parts int64) int64 { return b.Bytes / 32 * parts }

func (b Bounds) withDefaults() Bounds {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.Tokens, 1000)
	def(&b.Hosts, 10000)
	def(&b.Violations, 20000)
	def(&b.Rules, 5000)
	def(&b.URLs, 5000)
	def(&b.SpendIdentities, 1000)
	def(&b.SpendHosts, 10000)
	if b.Bytes <= 0 {
		b.Bytes = DefaultBudget
	}
	return b
}

// class is what happened to a request, as the token table splits it.
type class int

const (
	classAllowed class = iota
	classDeniedRule
	classWouldDeny
	classDeniedUnreachable
	classOtherRefusal
	classNotDecided
)

// Timeline slots.
const (
	slotAllowed, slotDenied, slotWouldDeny, slotNotDecided = 0, 1, 2, 3
	slotSuccessful, slotUnavailable, slotUnreachable       = 0, 1, 2
)

// classify reads robots.txt's reason (robotsTxtReason), not a politeness
// wait's cause.
func classify(r *record) class {
	switch {
	case string(r.Decision) == auditlog.DecisionAllow:
		return classAllowed
	case string(r.Decision) != auditlog.DecisionDeny:
		return classNotDecided
	case !r.Enforced:
		return classWouldDeny
	case string(r.RobotsTxtReason()) == auditlog.ReasonRule:
		return classDeniedRule
	case string(r.RobotsTxtReason()) == auditlog.ReasonUnreachable:
		return classDeniedUnreachable
	}
	return classOtherRefusal
}

// aggregator holds every section's state while the logs stream by: its
// size depends on Bounds, never on the number of lines nor on the length
// of their keys.
type aggregator struct {
	f          filter
	lines      uint64
	counted    uint64
	filtered   uint64
	cut        uint64
	skips      skips
	first      int64
	last       int64
	decisions  small
	reasons    small
	access     small
	sources    small
	hosts      distinct
	tokens     *topK[tokenStats]
	hostT      *topK[hostStats]
	violations *topK[violation]
	rules      *topK[ruleStats]
	urls       *topK[urlStats]
	spend      spendStats // the totals
	spendIDs   *topK[spendStats]
	spendHosts *topK[spendStats]
	decTL      timeline
	accTL      timeline
	sites      site.Memo
	leftOut    []string // up to maxLeftOut sites of lines the filters left out
	hostBuf    []byte
	siteBuf    []byte
	keyBuf     []byte
}

func newAggregator(b Bounds, f filter) *aggregator {
	b = b.withDefaults()
	return &aggregator{
		f:          f,
		hosts:      newDistinct(distinctExactCap, 14),
		tokens:     newTopK(b.Tokens, b.shareOf(shareTokens), (*tokenStats).heapBytes),
		hostT:      newTopK(b.Hosts, b.shareOf(shareHosts), (*hostStats).heapBytes),
		violations: newTopK[violation](b.Violations, b.shareOf(shareViolations), nil),
		rules:      newTopK[ruleStats](b.Rules, b.shareOf(shareRules), nil),
		urls:       newTopK[urlStats](b.URLs, b.shareOf(shareURLs), nil),
		spendIDs:   newTopK[spendStats](b.SpendIdentities, b.shareOf(shareSpend)/2, nil),
		spendHosts: newTopK[spendStats](b.SpendHosts, b.shareOf(shareSpend)/2, nil),
	}
}

// settle brings every table's accounting up to date (see topK.settle).
func (a *aggregator) settle() {
	a.tokens.settle()
	a.hostT.settle()
	a.violations.settle()
	a.rules.settle()
	a.urls.settle()
	a.spendIDs.settle()
	a.spendHosts.settle()
}

// add counts one parsed line.
func (a *aggregator) add(r *record) {
	st := a.sites.Of(r.URL)
	host := append(a.hostBuf[:0], st.Host...)
	a.hostBuf = host
	if !a.f.keep(r, st) {
		a.filtered++
		a.noteLeftOut(st.Origin)
		return
	}
	if a.counted == 0 || r.Time < a.first {
		a.first = r.Time
	}
	if a.counted == 0 || r.Time > a.last {
		a.last = r.Time
	}
	a.counted++
	if r.Cut {
		a.cut++
	}
	col := 0
	if !r.Enforced {
		col = 1
	}
	a.decisions.add(r.Decision, col)
	a.reasons.add(r.Reason, col)
	if len(r.Access) > 0 {
		a.access.add(r.Access, col)
	}
	if len(r.TokenSource) > 0 {
		a.sources.add(r.TokenSource, col)
	}
	origin := append(a.siteBuf[:0], st.Origin...)
	a.siteBuf = origin
	a.hosts.addBytes(origin)
	c := classify(r)
	a.decTL.add(r.Time, slotOf(c))
	if len(r.Access) > 0 {
		a.accTL.add(r.Time, accessSlot(r.Access))
	}
	a.tokens.add(r.Token, 1).add(r, c, origin)
	a.hostT.add(origin, 1).add(r, c)
	if c == classWouldDeny {
		a.violations.add(a.violationKey(r, origin), 1).add(r.Time)
	}
	if len(r.Rule) > 0 {
		a.rules.add(a.ruleKey(r), 1).add(c)
	}
	if string(r.Decision) == auditlog.DecisionDeny {
		a.urls.add(r.URL, 1).add(c)
	}
	a.addSpend(r, host)
}

func slotOf(c class) int {
	switch c {
	case classAllowed:
		return slotAllowed
	case classWouldDeny:
		return slotWouldDeny
	case classNotDecided:
		return slotNotDecided
	}
	return slotDenied
}

func accessSlot(access []byte) int {
	switch string(access) {
	case auditlog.AccessSuccessful:
		return slotSuccessful
	case auditlog.AccessUnavailable:
		return slotUnavailable
	case auditlog.AccessUnreachable:
		return slotUnreachable
	}
	return 3
}

// Keys of the violation and rule tables: fields joined by NUL, which JSON
// strings from the proxy do not contain (a hostile \u0000 only merges
// rows). The rule text comes last: a key cut at maxKeyLen loses only the
// end of a (very long) rule.
func (a *aggregator) violationKey(r *record, origin []byte) []byte {
	k := append(a.keyBuf[:0], r.Token...)
	k = append(append(k, 0), origin...)
	k = append(append(k, 0), r.RobotsURL...)
	k = strconv.AppendInt(append(k, 0), r.RuleLine, 10)
	k = append(append(k, 0), r.RobotsSHA256...)
	k = append(append(k, 0), r.RobotsTxtReason()...)
	k = append(append(k, 0), r.Rule...)
	a.keyBuf = k
	return k
}

func (a *aggregator) ruleKey(r *record) []byte {
	k := append(a.keyBuf[:0], r.RobotsURL...)
	k = strconv.AppendInt(append(k, 0), r.RuleLine, 10)
	k = append(append(k, 0), r.Rule...)
	a.keyBuf = k
	return k
}

// maxLeftOut is how many sites of lines the filters left out are kept, to
// name when the filters match nothing.
const maxLeftOut = 5

func (a *aggregator) noteLeftOut(origin string) {
	if len(a.leftOut) < maxLeftOut && !slices.Contains(a.leftOut, origin) {
		a.leftOut = append(a.leftOut, origin)
	}
}
