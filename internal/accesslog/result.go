package accesslog

import (
	"encoding/json"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
)

// Finding is one request listed in a Result: a violation, a disputable
// request or an impostor, with its evidence.
type Finding struct {
	// File is the log file ("-" for stdin) and Line the 1-based line
	// number in it.
	File string `json:"file"`
	Line int64  `json:"line"`
	// Time is when the request was logged.
	Time time.Time `json:"time"`
	// Client is the client address as logged.
	Client    string `json:"client"`
	Method    string `json:"method"`
	UserAgent string `json:"user_agent"`
	// ProductToken is the crawler the request is credited to (see
	// Auditor): the crawler catalogue's name for it, else the candidate
	// whose group the robots.txt in force names, else its first product
	// token (identity.Identity.Token).
	ProductToken string `json:"product_token"`
	// Class is ClassCrawler, or ClassOther for a library or tool
	// (identity.ClientOther), judged alike but reported apart.
	Class string `json:"class"`
	// Path is the request target as logged.
	Path   string `json:"path"`
	Status int    `json:"status"`
	// Identity is Verified, Unverified or Impostor for a request that
	// names a token with published ranges (or DNS domains, under -dns);
	// "" otherwise.
	Identity string `json:"identity,omitempty"`
	// Rule and RuleLine are the deciding version's disallow rule as
	// written and its line; Group is the group that applied ("*" for the
	// catch-all). Set on violations and disputable requests.
	Rule     string `json:"rule,omitempty"`
	RuleLine int    `json:"rule_line,omitempty"`
	Group    string `json:"group,omitempty"`
	// PathResolved is the reading of the path that decided when it is not
	// the path as sent (see policy.MatchPath).
	PathResolved string `json:"path_resolved,omitempty"`
	// RobotsSHA256 is the hex SHA-256 of the deciding version's octets;
	// RobotsFrom and RobotsUntil bound when it was in force (RobotsUntil
	// nil: still in force at the end of the history; RobotsFrom nil: a
	// single file, in force throughout); RobotsSource is where it was read.
	RobotsSHA256 string     `json:"robots_sha256,omitempty"`
	RobotsFrom   *time.Time `json:"robots_from,omitempty"`
	RobotsUntil  *time.Time `json:"robots_until,omitempty"`
	RobotsSource string     `json:"robots_source,omitempty"`
	// WindowStart is the start of the span whose versions the crawler
	// could have been using: 24 hours before the request, or its last
	// fetch of /robots.txt when that is later (WindowBasis "robots-fetch"
	// rather than "24h").
	WindowStart *time.Time `json:"window_start,omitempty"`
	WindowBasis string     `json:"window_basis,omitempty"`
	// VersionsConsidered counts those versions (an unknown version before
	// the history's first counts as one) and VersionsDisallowing those that
	// disallow the request.
	VersionsConsidered  int `json:"versions_considered,omitempty"`
	VersionsDisallowing int `json:"versions_disallowing,omitempty"`
}

// Classes of a judged client (Finding.Class, Crawler.Class): the names
// identity.Client gives them.
const (
	// ClassCrawler: a crawler (identity.ClientCrawler).
	ClassCrawler = catalogue.ClassCrawler
	// ClassOther: another client, a library or tool such as curl or
	// python-requests (identity.ClientOther).
	ClassOther = catalogue.ClassOther
)

// Crawler is what a Result says of one product token.
type Crawler struct {
	Token string `json:"product_token"`
	// Class is ClassCrawler, or ClassOther in Result.OtherClients.
	Class string `json:"class"`
	// Catalogue is what the crawler catalogue says of the crawler, nil
	// when it does not know it by this name.
	Catalogue *CatalogueEntry `json:"catalogue,omitempty"`
	// Requests claim the token; Verified, Unverified and Impostor count
	// their identity verdicts (all zero for a token that cannot be
	// verified).
	Requests   int64 `json:"requests"`
	Verified   int64 `json:"verified"`
	Unverified int64 `json:"unverified"`
	Impostor   int64 `json:"impostor"`
	// RobotsFetches counts its requests for /robots.txt.
	RobotsFetches int64 `json:"robots_fetches"`
	Violations    int64 `json:"violations"`
	Disputable    int64 `json:"disputable"`
	// TopViolated are the paths most often violated, most first.
	TopViolated []PathCount `json:"top_violated"`
	// Timeline counts requests and violations per UTC day.
	Timeline []Day `json:"timeline"`
}

// CatalogueEntry is what the crawler catalogue says of a crawler: where
// it is listed, crawler-user-agents' tags and URL, ai.robots.txt's
// operator, function and respect for robots.txt (as written there).
type CatalogueEntry struct {
	Source   string   `json:"source"`
	Tags     []string `json:"tags,omitempty"`
	URL      string   `json:"url,omitempty"`
	Operator string   `json:"operator,omitempty"`
	Function string   `json:"function,omitempty"`
	Respect  string   `json:"respect,omitempty"`
}

// PathCount is a path and how many times it was violated.
type PathCount struct {
	Path  string `json:"path"`
	Count int64  `json:"count"`
}

// Day is one UTC day of a crawler's timeline.
type Day struct {
	Date       string `json:"date"`
	Requests   int64  `json:"requests"`
	Violations int64  `json:"violations"`
	Disputable int64  `json:"disputable"`
}

// Input is a log file as read: what a reviewer checks the report was
// built from.
type Input struct {
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file's octets as stored
	// (compressed, for a gzipped log; standard input as received).
	SHA256 string `json:"sha256"`
	// Lines is the number of lines read from it.
	Lines int64 `json:"lines"`
}

// Summary counts a run's lines and requests.
type Summary struct {
	Files []string `json:"files"`
	// Inputs are the log files read by name (ReadFile), with their
	// hashes.
	Inputs []Input `json:"inputs"`
	// Lines read, Requests judged or counted, and Skipped lines by cause.
	Lines    int64   `json:"lines"`
	Requests int64   `json:"requests"`
	Skipped  Skipped `json:"skipped"`
	// Browsers are requests from browsers (identity.ClientBrowser: a
	// browser's shape or a family ua-parser's data names, nothing of a
	// crawler): counted, never judged.
	Browsers int64 `json:"browsers"`
	// Unnamed are requests whose User-Agent names no product token
	// (empty, "-", or browser compatibility tokens only) and is no
	// browser's: counted, never judged.
	Unnamed int64 `json:"unnamed"`
	// OtherClients are requests from other clients (libraries and
	// tools): judged, reported apart (Result.OtherClients).
	OtherClients int64 `json:"other_clients"`
	// Catalogue is the crawler catalogue's version (its sources and
	// their commits) that identified the crawlers.
	Catalogue string `json:"catalogue"`
	// BrowserFamilies is the version of ua-parser's data that told the
	// browsers of no browser's shape apart ("uap-core@" and its commit).
	BrowserFamilies string `json:"browser_families"`
	// Unjudged are crawler requests made before the history's first
	// version.
	Unjudged int64 `json:"unjudged"`
	// First and Last are the earliest and latest request times.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Versions is the number of robots.txt versions in the history.
	Versions int `json:"robots_versions"`
	// IPRanges are the published ranges of each token the identities
	// were checked against: their sources (file or URL, creationTime,
	// prefix count) and how the log's requests fell. A token with ranges
	// that no request claimed is listed only when given by name.
	IPRanges []TokenRanges `json:"ip_ranges"`
	// Warnings are what a reader must know before trusting the report: an
	// empty log, a robots.txt version that is not text, ranges far from
	// the log's period or that most requests fall outside of.
	Warnings []Warning `json:"warnings"`
}

// Result is a run's outcome: the JSON object "audit access-log -format
// json" writes. An Auditor's Result keeps its findings on disk: read them
// with Each, or Load them into the slices; a Result decoded from JSON has
// them in the slices.
type Result struct {
	Summary  Summary    `json:"summary"`
	Crawlers []*Crawler `json:"crawlers"`
	// OtherClients are the libraries and tools, judged like crawlers.
	OtherClients []*Crawler `json:"other_clients"`
	Violations   []Finding  `json:"violations"`
	Disputable   []Finding  `json:"disputable"`
	Impostors    []Finding  `json:"impostors"`
	// SkippedLines locates every line not judged, with why (counted by
	// cause in Summary.Skipped).
	SkippedLines []SkippedLine `json:"skipped_lines"`

	lists   map[string]*findingList // by kind, nil when the slices hold them
	skipped *spill[SkippedLine]     // nil when SkippedLines holds them
}

// Kinds of findings: the JSON arrays and the csv kind column.
const (
	KindViolation  = "violation"
	KindDisputable = "disputable"
	KindImpostor   = "impostor"
)

// Kinds are the kinds of findings in output order.
func Kinds() []string { return []string{KindViolation, KindDisputable, KindImpostor} }

func (r *Result) slice(kind string) *[]Finding {
	switch kind {
	case KindViolation:
		return &r.Violations
	case KindDisputable:
		return &r.Disputable
	}
	return &r.Impostors
}

// Count is the number of findings of kind.
func (r *Result) Count(kind string) int64 {
	if l := r.lists[kind]; l != nil {
		return l.n
	}
	return int64(len(*r.slice(kind)))
}

// Each calls fn with every finding of kind, in log order; it stops at
// fn's first error, and returns it.
func (r *Result) Each(kind string, fn func(*Finding) error) error {
	if l := r.lists[kind]; l != nil {
		return l.each(fn)
	}
	for i := range *r.slice(kind) {
		if err := fn(&(*r.slice(kind))[i]); err != nil {
			return err
		}
	}
	return nil
}

// eachJSON calls fn with every finding of kind encoded as JSON.
func (r *Result) eachJSON(kind string, fn func([]byte) error) error {
	if l := r.lists[kind]; l != nil {
		return l.eachRaw(fn)
	}
	return r.Each(kind, func(f *Finding) error {
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		return fn(b)
	})
}

// SkippedCount is the number of lines skipped.
func (r *Result) SkippedCount() int64 {
	if r.skipped != nil {
		return r.skipped.n
	}
	return int64(len(r.SkippedLines))
}

// EachSkipped calls fn with every skipped line, in log order; it stops
// at fn's first error, and returns it.
func (r *Result) EachSkipped(fn func(*SkippedLine) error) error {
	if r.skipped != nil {
		return r.skipped.each(fn)
	}
	for i := range r.SkippedLines {
		if err := fn(&r.SkippedLines[i]); err != nil {
			return err
		}
	}
	return nil
}

// eachSkippedJSON calls fn with every skipped line encoded as JSON.
func (r *Result) eachSkippedJSON(fn func([]byte) error) error {
	if r.skipped != nil {
		return r.skipped.eachRaw(fn)
	}
	return r.EachSkipped(func(s *SkippedLine) error {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return fn(b)
	})
}

// Load reads every finding and skipped line into the slices, for a result
// small enough.
func (r *Result) Load() error {
	if r.skipped != nil {
		r.SkippedLines = []SkippedLine{}
		if err := r.skipped.each(func(s *SkippedLine) error { r.SkippedLines = append(r.SkippedLines, *s); return nil }); err != nil {
			return err
		}
		r.skipped = nil
	}
	for _, k := range Kinds() {
		if r.lists[k] == nil {
			continue
		}
		s := r.slice(k)
		*s = []Finding{}
		if err := r.lists[k].each(func(f *Finding) error { *s = append(*s, *f); return nil }); err != nil {
			return err
		}
	}
	r.lists = nil
	return nil
}
