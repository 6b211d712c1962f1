package accesslog

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/ipranges"
)

// RangesAuto is the -ip-ranges value that takes every token's ranges
// from the copies "robotsproxy ipranges update" stored in the data
// directory.
const RangesAuto = "auto"

// RangesSource is where a token's ranges were read: what every report
// states of them.
type RangesSource struct {
	// Source is the file read (a path) or the URL fetched.
	Source string `json:"source"`
	// URL is the operator's URL a stored copy was fetched from
	// (ipranges update); "" for a file given by path.
	URL string `json:"url,omitempty"`
	// FetchedAt is when it was fetched, nil for a file given by path.
	FetchedAt *time.Time `json:"fetched_at,omitempty"`
	// CreationTime is the file's creationTime, nil when it states none.
	CreationTime *time.Time `json:"creation_time,omitempty"`
	// Prefixes is the number of prefixes it gives the token, and Format
	// its format (ipranges.FormatGoogle, FormatJAFAR, FormatPlain).
	Prefixes int    `json:"prefixes"`
	Format   string `json:"format"`
}

// dated returns the date the ranges speak for: their creationTime, else
// when they were fetched; zero when neither is known.
func (s RangesSource) dated() time.Time {
	switch {
	case s.CreationTime != nil:
		return *s.CreationTime
	case s.FetchedAt != nil:
		return *s.FetchedAt
	}
	return time.Time{}
}

// TokenRanges is what a report says of one product token's published
// ranges: where they were read, and how the log's requests fell.
type TokenRanges struct {
	Token   string         `json:"product_token"`
	Sources []RangesSource `json:"sources"`
	// Prefixes is the number of prefixes over all its sources.
	Prefixes int `json:"prefixes"`
	// Requests claimed the token from a logged address and were checked
	// against the ranges: Inside from an address in them, Outside from one
	// that is not, Near from one outside them but next to a published
	// prefix (in its /16, or /32 for IPv6: see ipranges.Set.Near).
	Requests int64 `json:"requests"`
	Inside   int64 `json:"inside"`
	Outside  int64 `json:"outside"`
	Near     int64 `json:"near"`
	// Given is true for a token named with -ip-ranges TOKEN=..., false
	// for one taken from -ip-ranges auto.
	Given bool `json:"given"`
}

// RangesOptions say where LoadRanges reads from.
type RangesOptions struct {
	// DataDir holds the copies ipranges update stored, for RangesAuto.
	DataDir string
	// Fetcher fetches TOKEN=URL ranges; nil refuses URLs.
	Fetcher *access.Fetcher
	// Now is the clock for a URL's fetch time; nil is time.Now.
	Now func() time.Time
}

// LoadRanges adds to v the ranges each -ip-ranges value names: RangesAuto
// (every copy stored in o.DataDir, for the product tokens it covers), or
// TOKEN=FILE and TOKEN=URL (a file, or a URL fetched with o.Fetcher, in a
// format ipranges.Parse reads). A token given by name takes its ranges
// from those values only, never from the stored copies. It returns the
// tokens given by name, as typed. An error names the value.
func LoadRanges(ctx context.Context, v *Verifier, specs []string, o RangesOptions) ([]string, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	var given []string
	auto := false
	for _, spec := range specs {
		if spec == RangesAuto {
			auto = true
			continue
		}
		tok, src, ok := strings.Cut(spec, "=")
		if !ok || tok == "" || src == "" {
			return nil, fmt.Errorf("-ip-ranges %s: want auto, TOKEN=FILE or TOKEN=URL", spec)
		}
		f, rs, err := readSpec(ctx, src, o)
		if err != nil {
			return nil, fmt.Errorf("-ip-ranges %s: %w", spec, err)
		}
		v.AddFile([]string{tok}, f, rs, true)
		given = append(given, tok)
	}
	if !auto {
		return given, nil
	}
	stored, err := ipranges.Load(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("-ip-ranges auto: %w", err)
	}
	if len(stored) == 0 {
		return nil, fmt.Errorf("-ip-ranges auto: no ranges stored in %s: run robotsproxy ipranges update (with the same -data-dir or data_dir)", o.DataDir)
	}
	for _, s := range stored {
		var tokens []string
		for _, t := range s.ProductTokens() {
			if !v.given(t) {
				tokens = append(tokens, t)
			}
		}
		fetched := s.FetchedAt
		src := RangesSource{Source: s.Path, URL: s.URL, FetchedAt: &fetched, CreationTime: s.CreationTime, Format: s.Format}
		v.AddFile(tokens, s.File, src, false)
	}
	return given, nil
}

// readSpec reads the FILE or URL of TOKEN=SOURCE.
func readSpec(ctx context.Context, src string, o RangesOptions) (*ipranges.File, RangesSource, error) {
	rs := RangesSource{Source: src}
	if !strings.HasPrefix(src, "https://") && !strings.HasPrefix(src, "http://") {
		f, err := ipranges.ReadFile(src)
		if err != nil {
			return nil, rs, err
		}
		rs.Format = f.Format
		if !f.CreationTime.IsZero() {
			t := f.CreationTime
			rs.CreationTime = &t
		}
		return f, rs, nil
	}
	if o.Fetcher == nil {
		return nil, rs, errors.New("URLs are not fetched here")
	}
	f, _, a, err := ipranges.Fetch(ctx, o.Fetcher, src)
	if err != nil {
		return nil, rs, err
	}
	at := a.FetchedAt.UTC()
	rs.URL, rs.FetchedAt, rs.Format = src, &at, f.Format
	if !f.CreationTime.IsZero() {
		t := f.CreationTime
		rs.CreationTime = &t
	}
	return f, rs, nil
}

// AddFile gives the prefixes of f to tokens, and records src as their
// source: an untagged prefix goes to every token, one a JAFAR publisher
// tags with services to those services. given marks tokens named on the
// command line.
func (v *Verifier) AddFile(tokens []string, f *ipranges.File, src RangesSource, given bool) {
	per := map[string][]netip.Prefix{}
	named := map[string]bool{}
	for _, t := range tokens {
		named[strings.ToLower(t)] = true
	}
	var order []string
	add := func(tok string, p netip.Prefix) {
		t := strings.ToLower(tok)
		if _, ok := per[t]; !ok {
			order = append(order, tok)
		}
		per[t] = append(per[t], p)
	}
	for _, p := range f.Prefixes {
		if len(p.Services) == 0 {
			for _, t := range tokens {
				add(t, p.Prefix)
			}
			continue
		}
		for _, s := range p.Services {
			add(s, p.Prefix)
		}
	}
	if v.Ranges == nil {
		v.Ranges, v.sources = map[string][]netip.Prefix{}, map[string]*TokenRanges{}
	}
	for _, tok := range order {
		t := strings.ToLower(tok)
		v.Ranges[t] = append(v.Ranges[t], per[t]...)
		tr := v.sources[t]
		if tr == nil {
			tr = &TokenRanges{Token: tok}
			v.sources[t] = tr
			v.order = append(v.order, t)
		}
		s := src
		s.Prefixes = len(per[t])
		tr.Sources = append(tr.Sources, s)
		tr.Prefixes += s.Prefixes
		tr.Given = tr.Given || given && named[t]
	}
	v.idx = nil // rebuilt on the next Verify
}

// given reports whether token's ranges were given on the command line.
func (v *Verifier) given(token string) bool {
	tr := v.sources[strings.ToLower(token)]
	return tr != nil && tr.Given
}

// parseClient reads a logged client address: an IP address, possibly in
// brackets or with a zone. A host name gives ok false.
func parseClient(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
