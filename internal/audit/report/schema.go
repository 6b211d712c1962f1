package report

import "time"

// SchemaVersion is Report.Version: it changes when a field changes
// meaning or goes away (new fields may come without a change). Version 2:
// hosts rows, and the distinct_hosts counts, are per origin (scheme and
// authority), no longer per host name.
const SchemaVersion = 2

// Report is the whole audit report; "-format json" writes it as one JSON
// object, and the other formats render the same value. Counts are
// requests (audit lines) unless said otherwise; times are UTC.
type Report struct {
	Version     int       `json:"version"`
	GeneratedAt time.Time `json:"generated_at"`
	Filters     Filters   `json:"filters"`
	Inputs      []Input   `json:"inputs"`
	Summary     Summary   `json:"summary"`
	// Integrity says whether the logs' hash chain was checked and holds.
	Integrity Integrity `json:"integrity"`
	// Tokens has one row per product token (crawler), the most requests
	// first; the token "(none)" collects lines without one.
	Tokens Section[TokenRow] `json:"tokens"`
	// Violations are the report-mode denials (decision "deny" with
	// enforced false): requests forwarded although robots.txt (or its
	// absence) forbade them, one row per token, host, robots.txt, rule
	// and robots.txt version, the most frequent first.
	Violations Section[ViolationRow] `json:"violations"`
	// Hosts has one row per destination host, the most requests first.
	Hosts Section[HostRow] `json:"hosts"`
	// Rules are the deciding robots.txt rules, the most requests first.
	Rules Section[RuleRow] `json:"rules"`
	// DeniedURLs are the URLs with a "deny" decision, enforced or not,
	// the most denials first.
	DeniedURLs Section[URLRow] `json:"denied_urls"`
	// Spend is what pay per crawl cost: in total, per identity and per
	// host.
	Spend     Spend     `json:"spend"`
	Timelines Timelines `json:"timelines"`

	// leftOut names up to five sites of the lines the filters left out.
	leftOut []string
}

// Filters echo the command's selection; empty means no filter.
type Filters struct {
	Since *time.Time `json:"since,omitempty"` // inclusive
	Until *time.Time `json:"until,omitempty"` // exclusive
	Token string     `json:"token,omitempty"`
	// Host is -host as given, lower-cased: an origin, an authority, or
	// a host name (see Options.Host).
	Host string `json:"host,omitempty"`
}

// Input is one log read, in the order read (by the time of its first line).
type Input struct {
	Name    string `json:"name"`
	Gzip    bool   `json:"gzip"`
	Lines   uint64 `json:"lines"`
	Skipped uint64 `json:"skipped"`
}

// InputError is a log that could not be read to its end: an unreadable
// gzip stream or a read error. Line is the last line read before it.
type InputError struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// Summary is the whole log at a glance.
type Summary struct {
	First           *time.Time `json:"first,omitempty"`
	Last            *time.Time `json:"last,omitempty"`
	DurationSeconds int64      `json:"duration_seconds"`
	Lines           uint64     `json:"lines"`    // lines read, including skipped and filtered ones
	Requests        uint64     `json:"requests"` // lines counted in the report
	Filtered        uint64     `json:"filtered"` // valid lines left out by the filters
	// Skipped lines could not be read as audit lines; SkippedBy gives the
	// reasons ("truncated line", "not a JSON object", "no decision field",
	// ...), FirstSkipped where the first one was ("file:line").
	Skipped      uint64            `json:"skipped"`
	FirstSkipped string            `json:"first_skipped,omitempty"`
	SkippedBy    map[string]uint64 `json:"skipped_by,omitempty"`
	InputErrors  []InputError      `json:"input_errors,omitempty"`
	// MoreInputErrors counts input errors past the first 20 listed.
	MoreInputErrors int `json:"more_input_errors,omitempty"`
	// FieldsCut counts lines where the proxy cut a field (FIELD_truncated).
	FieldsCut uint64 `json:"fields_cut"`
	// DistinctHosts counts the distinct sites (origins: scheme and
	// authority, as HostRow.Origin); exact up to 65536
	// (DistinctHostsExact), then a HyperLogLog estimate (standard error
	// 0.8%).
	DistinctHosts      uint64  `json:"distinct_hosts"`
	DistinctHostsExact bool    `json:"distinct_hosts_exact"`
	Decisions          []Count `json:"decisions"`
	Reasons            []Count `json:"reasons"`
	AccessResults      []Count `json:"access_results"` // lines with an access_result only
	TokenSources       []Count `json:"token_sources"`
}

// Count is one key's requests, enforced and report-only (enforced false)
// apart; Total is their sum.
type Count struct {
	Key        string `json:"key"`
	Total      uint64 `json:"total"`
	Enforced   uint64 `json:"enforced"`
	ReportOnly uint64 `json:"report_only"`
}

// Section is a bounded table. Rows holds at most the rows asked for (the
// -top flag) of the Tracked rows the table held, which are at most
// Capacity and at most what fits in ByteBudget octets; Distinct counts the
// keys seen (exact up to 65536, DistinctExact; then a HyperLogLog
// estimate, standard error 1.6%), MoreNotShown is Distinct less the rows
// shown. BoundHit means more keys were seen than the table could hold
// (Capacity rows, or ByteBudget octets when ByteBoundHit): rows whose
// Error is not zero entered the table after a key was evicted and their
// counts are overestimates by at most Error (Space-Saving), and their
// other columns count only since they entered. A key that makes more than
// 1/Tracked of the table's count is among the rows tracked.
type Section[T any] struct {
	Rows          []T    `json:"rows"`
	Capacity      int    `json:"capacity"`
	Distinct      uint64 `json:"distinct"`
	DistinctExact bool   `json:"distinct_exact"`
	MoreNotShown  uint64 `json:"more_not_shown"`
	BoundHit      bool   `json:"bound_hit"`
	// Tracked is the rows the table held at the end.
	Tracked int `json:"tracked"`
	// ByteBudget is the table's share of the report's memory budget in
	// octets; Bytes is what its rows accounted at the end (keys, payloads
	// and a fixed overhead a row). ByteBoundHit means some key was
	// evicted to keep Bytes within ByteBudget: with long keys, fewer than
	// Capacity rows are tracked.
	ByteBudget   int64 `json:"byte_budget"`
	Bytes        int64 `json:"bytes"`
	ByteBoundHit bool  `json:"byte_bound_hit"`
}

// TokenRow is one crawler. Requests = Allowed + DeniedByRule + WouldDeny +
// DeniedUnreachable + OtherRefusals + NotDecided (exactly, for rows with
// Error 0). The reason the columns read is robots.txt's: robots_reason
// when the line has it, else reason.
type TokenRow struct {
	Token             string `json:"token"`
	Requests          uint64 `json:"requests"`
	Allowed           uint64 `json:"allowed"`
	DeniedByRule      uint64 `json:"denied_by_rule"`     // deny, enforced, reason "rule"
	WouldDeny         uint64 `json:"would_deny"`         // deny, enforced false (any reason)
	DeniedUnreachable uint64 `json:"denied_unreachable"` // deny, enforced, reason "unreachable"
	OtherRefusals     uint64 `json:"other_refusals"`     // deny, enforced, any other reason
	NotDecided        uint64 `json:"not_decided"`        // decision "none" (or unknown)
	// DistinctHosts counts the distinct sites (origins, as
	// HostRow.Origin) the crawler asked for; exact up to 256, then a
	// HyperLogLog estimate (standard error 3.3%) and DistinctHostsExact
	// is false.
	DistinctHosts      uint64 `json:"distinct_hosts"`
	DistinctHostsExact bool   `json:"distinct_hosts_exact"`
	// Source is the token sources seen, the most frequent first, joined
	// by "+"; Sources counts each.
	Source  string            `json:"source"`
	Sources map[string]uint64 `json:"sources"`
	Error   uint64            `json:"error,omitempty"`
}

// ViolationRow is one broken rule in report mode. Rule is empty when the
// denial had no rule (Reason then says why, e.g. "unreachable"). Reason is
// robots.txt's: the line's robots_reason when it has one (a request that
// waited for politeness), else its reason.
type ViolationRow struct {
	Token string `json:"token"`
	// Host is the host name of the request's url, without the port;
	// Origin is its site, as HostRow.Origin, which rows are keyed by.
	Host         string    `json:"host"`
	Origin       string    `json:"origin"`
	RobotsURL    string    `json:"robots_url"`
	Rule         string    `json:"rule"`
	RuleLine     int64     `json:"rule_line"`
	RobotsSHA256 string    `json:"robots_sha256"`
	Reason       string    `json:"reason"`
	Count        uint64    `json:"count"`
	FirstSeen    time.Time `json:"first_seen"`
	LastSeen     time.Time `json:"last_seen"`
	Error        uint64    `json:"error,omitempty"`
}

// HostRow is one destination site: one origin, the scheme and authority
// robots.txt applies to (RFC 9309 2.3), so that http and https of one
// host, and each port, are rows of their own.
type HostRow struct {
	// Origin is "scheme://host[:port]", the port left out when it is the
	// scheme's default: the key of the row. A url that does not read as
	// an http or https authority keys its row by its authority as written,
	// lower-cased.
	Origin string `json:"origin"`
	// Authority is the origin's host:port with the default port filled
	// in ("example.com:443"), "" for a url that does not read as one.
	Authority string `json:"authority,omitempty"`
	// Host is the origin's host name, lower case, without the port (IPv6
	// literals keep their brackets).
	Host        string `json:"host"`
	Requests    uint64 `json:"requests"`
	Denied      uint64 `json:"denied"`     // deny, enforced
	WouldDeny   uint64 `json:"would_deny"` // deny, enforced false
	Successful  uint64 `json:"successful"` // access_result counts
	Unavailable uint64 `json:"unavailable"`
	Unreachable uint64 `json:"unreachable"`
	// A spell is a run of "unreachable" access results not interrupted by
	// another access result; UnreachableSeconds sums, over the spells,
	// the time from the first to the last unreachable line of the spell
	// (a spell of one line counts 0 s). UnreachableAtEnd: the last spell
	// had not ended when the log did.
	UnreachableSpells  uint64 `json:"unreachable_spells"`
	UnreachableSeconds int64  `json:"unreachable_seconds"`
	UnreachableAtEnd   bool   `json:"unreachable_at_end"`
	// RobotsVersions counts distinct robots_sha256 values (exact up to
	// 256); LastRobotsSHA256 is the last one seen.
	RobotsVersions   uint64 `json:"robots_versions"`
	LastRobotsSHA256 string `json:"last_robots_sha256,omitempty"`
	Error            uint64 `json:"error,omitempty"`
}

// RuleRow is one deciding rule of one robots.txt.
type RuleRow struct {
	RobotsURL string `json:"robots_url"`
	Rule      string `json:"rule"`
	RuleLine  int64  `json:"rule_line"`
	Requests  uint64 `json:"requests"`
	Allowed   uint64 `json:"allowed"`
	Denied    uint64 `json:"denied"`
	WouldDeny uint64 `json:"would_deny"`
	Error     uint64 `json:"error,omitempty"`
}

// URLRow is one denied URL.
type URLRow struct {
	URL       string `json:"url"`
	Denials   uint64 `json:"denials"` // Denied + WouldDeny
	Denied    uint64 `json:"denied"`
	WouldDeny uint64 `json:"would_deny"`
	Error     uint64 `json:"error,omitempty"`
}

// Timelines are counts per time bucket, for the charts. Buckets start at
// Start and are BucketSeconds wide (1s, 5s, 15s, 30s, 1m, 5m, 15m, 30m, 1h, 3h, 6h, 12h,
// 1d, 7d, then x4: the narrowest giving at most 240 buckets).
type Timelines struct {
	Start         *time.Time `json:"start,omitempty"`
	BucketSeconds int64      `json:"bucket_seconds"`
	Buckets       int        `json:"buckets"`
	// Decisions: allowed, denied (enforced), would_deny, not_decided.
	Decisions map[string][]uint64 `json:"decisions"`
	// Access: successful, unavailable, unreachable (lines with an
	// access_result).
	Access map[string][]uint64 `json:"access"`
	// Tokens: the first rows of Tokens (at most 8), each with allowed,
	// denied and would_deny series.
	Tokens []TokenSeries `json:"tokens"`
}

// TokenSeries is one token's decisions over time.
type TokenSeries struct {
	Token     string   `json:"token"`
	Allowed   []uint64 `json:"allowed"`
	Denied    []uint64 `json:"denied"`
	WouldDeny []uint64 `json:"would_deny"`
}
