package accesslog

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// textSkipped is how many skipped lines the text and html outputs
// locate; json has every one.
const textSkipped = 10

func renderText(w io.Writer, r *Result) error {
	s := &r.Summary
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "access log audit\n")
	for _, in := range s.Inputs {
		fmt.Fprintf(tw, "log\t%s\t%d lines, sha256 %s\n", in.File, in.Lines, in.SHA256)
	}
	fmt.Fprintf(tw, "lines\t%d\t(skipped: %d malformed, %d too long, %d invalid UTF-8)\n", s.Lines, s.Skipped.Malformed, s.Skipped.TooLong, s.Skipped.InvalidUTF8)
	fmt.Fprintf(tw, "requests\t%d\t(%d from browsers and %d naming no product, never judged; %d from other clients; %d before the first robots.txt version)\n",
		s.Requests, s.Browsers, s.Unnamed, s.OtherClients, s.Unjudged)
	fmt.Fprintf(tw, "crawler catalogue\t%s\n", s.Catalogue)
	fmt.Fprintf(tw, "browser families\t%s\n", s.BrowserFamilies)
	fmt.Fprintf(tw, "period\t%s\n", period(s))
	fmt.Fprintf(tw, "robots.txt versions\t%d\n", s.Versions)
	fmt.Fprintf(tw, "violations\t%d\n", r.Count(KindViolation))
	fmt.Fprintf(tw, "disputable\t%d\n", r.Count(KindDisputable))
	fmt.Fprintf(tw, "impostors\t%d\n", r.Count(KindImpostor))
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings\n")
		for _, wn := range s.Warnings {
			fmt.Fprintf(w, "- %s\n", wn.Message)
		}
	}
	if len(s.IPRanges) > 0 {
		fmt.Fprintf(w, "\npublished IP ranges\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "product token\tprefixes\tcreationTime\trequests\tinside\toutside\tnear\tsource\n")
		for _, tr := range s.IPRanges {
			for i, src := range tr.Sources {
				counts := fmt.Sprintf("%d\t%d\t%d\t%d", tr.Requests, tr.Inside, tr.Outside, tr.Near)
				if i > 0 {
					counts = "\t\t\t"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", tr.Token, src.Prefixes, dateOr(src.CreationTime, "not stated"), counts, sourceText(src))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	textTable(tw, "crawler", r.Crawlers)
	if len(r.OtherClients) > 0 {
		fmt.Fprintln(tw)
		textTable(tw, "other client", r.OtherClients)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := textSkippedLines(w, r); err != nil {
		return err
	}
	titles := map[string]string{KindViolation: "violations", KindDisputable: "disputable requests", KindImpostor: "impostors"}
	for _, k := range Kinds() {
		if r.Count(k) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", titles[k])
		err := r.Each(k, func(f *Finding) error {
			_, err := fmt.Fprintln(w, textFinding(f))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// period is the log's period, or says that there is none.
func period(s *Summary) string {
	if s.First == nil {
		return "none: no request was read"
	}
	return stamp(s.First) + " .. " + stamp(s.Last)
}

// dateOr writes an RFC 3339 time, or none for nil.
func dateOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return stamp(t)
}

// sourceText names a ranges source: the file, and the URL and fetch time
// of a stored or fetched copy.
func sourceText(s RangesSource) string {
	if s.URL == "" || s.URL == s.Source {
		if s.FetchedAt != nil {
			return s.Source + " (fetched " + stamp(s.FetchedAt) + ")"
		}
		return s.Source
	}
	return fmt.Sprintf("%s (from %s, fetched %s)", s.Source, s.URL, dateOr(s.FetchedAt, "at an unknown time"))
}

// textSkippedLines locates the first skipped lines.
func textSkippedLines(w io.Writer, r *Result) error {
	n := r.SkippedCount()
	if n == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nskipped lines (%s; -format json lists every one)\n", firstOf(n))
	return eachFirstSkipped(r, func(s *SkippedLine) error {
		_, err := fmt.Fprintln(w, s.String())
		return err
	})
}

// errStop ends an iteration early.
var errStop = errors.New("stop")

// eachFirstSkipped calls fn with the first textSkipped skipped lines.
func eachFirstSkipped(r *Result, fn func(*SkippedLine) error) error {
	shown := 0
	err := r.EachSkipped(func(s *SkippedLine) error {
		if shown >= textSkipped {
			return errStop
		}
		shown++
		return fn(s)
	})
	if err == errStop {
		return nil
	}
	return err
}

// firstOf says how many of n skipped lines are shown.
func firstOf(n int64) string {
	if n <= textSkipped {
		return fmt.Sprintf("all %d", n)
	}
	return fmt.Sprintf("the first %d of %d", textSkipped, n)
}

// textTable writes a table of crawlers headed by what they are.
func textTable(tw io.Writer, what string, cs []*Crawler) {
	fmt.Fprintf(tw, "%s\trequests\tverified\tunverified\timpostor\trobots.txt fetches\tviolations\tdisputable\n", what)
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Token, c.Requests, c.Verified, c.Unverified, c.Impostor, c.RobotsFetches, c.Violations, c.Disputable)
	}
}

// textFinding is one finding on one line, its evidence included.
func textFinding(f *Finding) string {
	s := fmt.Sprintf("%s:%d %s %s %s %q %s %s", f.File, f.Line, stamp(&f.Time), f.Client, f.ProductToken, f.UserAgent, f.Method, f.Path)
	if f.Class == ClassOther {
		s += " class=other"
	}
	if f.Identity != "" {
		s += " identity=" + f.Identity
	}
	if f.RobotsSHA256 != "" {
		s += fmt.Sprintf(" rule=%q line=%d robots_sha256=%s %s (%d of %d versions disallow; window from %s %s)",
			f.Rule, f.RuleLine, f.RobotsSHA256, validity(f), f.VersionsDisallowing, f.VersionsConsidered,
			f.WindowBasis, stamp(f.WindowStart))
	}
	return s
}

// validity says when the deciding version was in force.
func validity(f *Finding) string {
	switch {
	case f.RobotsFrom == nil:
		return "in force throughout"
	case f.RobotsUntil == nil:
		return "in force from " + stamp(f.RobotsFrom)
	}
	return "in force from " + stamp(f.RobotsFrom) + " to " + stamp(f.RobotsUntil)
}

// rangesOf indexes a result's token ranges by lower-cased token.
func rangesOf(r *Result) map[string]*TokenRanges {
	m := make(map[string]*TokenRanges, len(r.Summary.IPRanges))
	for i := range r.Summary.IPRanges {
		m[strings.ToLower(r.Summary.IPRanges[i].Token)] = &r.Summary.IPRanges[i]
	}
	return m
}

// warningsOf indexes a result's warnings by lower-cased token, each
// token's joined with "; ".
func warningsOf(r *Result) map[string]string {
	m := map[string]string{}
	for _, w := range r.Summary.Warnings {
		if w.Token == "" {
			continue
		}
		t := strings.ToLower(w.Token)
		if m[t] != "" {
			m[t] += "; "
		}
		m[t] += w.Message
	}
	return m
}
