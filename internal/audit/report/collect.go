package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit/site"
)

// Options select and shape a report.
type Options struct {
	// Since keeps lines at or after it; Until keeps lines before it. The
	// zero time means no bound.
	Since, Until time.Time
	// Token keeps lines of this product token (case-insensitive). Host
	// keeps lines of one site: an origin ("https://example.com:8443",
	// that scheme and authority only), an authority with a port
	// ("127.0.0.1:8001", any scheme), or a host name ("example.com",
	// every scheme and port); case-insensitive, canonicalised as the
	// proxy keys robots.txt (policy.Authority). A value that names no
	// http or https site is an error of Collect.
	Token, Host string
	// Top is the number of rows shown per section; 0 shows every row the
	// section tracked (at most its Bounds capacity).
	Top int
	// Bounds are the top-k capacities; zero fields take their defaults.
	Bounds Bounds
	// Verify, when not nil, checks the logs' hash chain while they are
	// read, on the other core (it costs about as much as the report):
	// Report.Integrity says what was found. Nil, or a log read from
	// stdin, leaves the report saying that it was not checked.
	Verify *ChainCheck
	// Stdin is read for the log named "-".
	Stdin io.Reader
	// Now stamps Report.GeneratedAt; nil means time.Now.
	Now func() time.Time
}

// filter is Options' line selection.
type filter struct {
	since, until int64
	hasSince     bool
	hasUntil     bool
	token        []byte
	host         site.Filter
}

func newFilter(o Options) (filter, error) {
	h, err := site.ParseFilter(o.Host)
	if err != nil {
		return filter{}, err
	}
	f := filter{token: []byte(o.Token), host: h}
	if !o.Since.IsZero() {
		f.since, f.hasSince = o.Since.Unix(), true
	}
	if !o.Until.IsZero() {
		f.until, f.hasUntil = o.Until.Unix(), true
	}
	return f, nil
}

// keep reports whether a line of site st passes.
func (f *filter) keep(r *record, st site.Site) bool {
	switch {
	case f.hasSince && r.Time < f.since,
		f.hasUntil && r.Time >= f.until,
		len(f.token) > 0 && !bytes.EqualFold(r.Token, f.token),
		!f.host.Keep(st):
		return false
	}
	return true
}

// Collect reads the logs named (paths of plain or gzip files, "-" for
// o.Stdin) oldest first and returns the report. Lines that are not audit
// lines, unreadable gzip streams and read errors are counted in the
// report, not returned; the error is for a log that cannot be opened.
func Collect(names []string, o Options) (*Report, error) {
	srcs, err := orderSources(names, o.Stdin)
	if err != nil {
		return nil, fmt.Errorf("audit report: %w", err)
	}
	f, err := newFilter(o)
	if err != nil {
		return nil, fmt.Errorf("audit report: -host: %w", err)
	}
	a := newAggregator(o.Bounds, f)
	inputs := make([]Input, len(srcs))
	ordered := make([]string, len(srcs))
	for i, s := range srcs {
		ordered[i] = s.name
	}
	integrity := unverified(ordered, o.Verify)
	checked := make(chan Integrity, 1)
	if integrity.Status == "" {
		go func() { checked <- verifyChain(ordered, o.Verify) }()
	} else {
		checked <- integrity
	}
	for i, s := range srcs {
		inputs[i].Name = s.name
		if err := a.readSource(s, o.Stdin, &inputs[i]); err != nil {
			<-checked
			return nil, fmt.Errorf("audit report: %w", err)
		}
	}
	integrity = <-checked
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	rep := a.build(o.Top)
	rep.GeneratedAt = now().UTC().Truncate(time.Second)
	rep.Inputs = inputs
	rep.Integrity = integrity
	for _, why := range notJSON {
		rep.Integrity.NotJSON += rep.Summary.SkippedBy[why]
	}
	rep.leftOut = a.leftOut
	rep.Filters = Filters{Token: o.Token, Host: strings.ToLower(o.Host)}
	if !o.Since.IsZero() {
		t := o.Since.UTC()
		rep.Filters.Since = &t
	}
	if !o.Until.IsZero() {
		t := o.Until.UTC()
		rep.Filters.Until = &t
	}
	return rep, nil
}

// NoMatch is the warning for filters that left out every valid line:
// "" when a line passed them, or when no filter was given or no valid
// line was read. It names a few of the sites the log does have, which
// is where a mistyped -host goes wrong.
func (r *Report) NoMatch() string {
	if r.Summary.Requests > 0 || r.Summary.Filtered == 0 {
		return ""
	}
	msg := fmt.Sprintf("no line matches the filters (%s): %d lines left out", filterText(r.Filters), r.Summary.Filtered)
	if len(r.leftOut) > 0 {
		msg += "; sites in the log include " + strings.Join(r.leftOut, ", ")
	}
	return msg
}

func location(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }
