package accesslog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/robots"
)

// The log formats a line can look like (LooksLike).
const (
	LooksCombined = "combined"
	LooksCommon   = "common"
	LooksJSON     = "JSON lines"
	LooksAudit    = "robotsproxy audit lines"
)

// SampleLines is how many of a log's first non-blank lines decide whether
// it is in the chosen format: when most of them are skipped, the log is
// refused (*FormatError) rather than judged from the few that parse.
const SampleLines = 100

// LooksLike names the log format line is in: LooksCombined, LooksCommon,
// LooksJSON, LooksAudit (a JSON object with the proxy's own audit fields,
// decision and reason), or "" when it is none of them.
func LooksLike(line []byte) string {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(t, &m) != nil {
			return ""
		}
		_, dec := m[auditlog.FieldDecision]
		_, reason := m[auditlog.FieldReason]
		_, url := m[auditlog.FieldURL]
		if dec && reason && url {
			return LooksAudit
		}
		return LooksJSON
	}
	var e Entry
	if (&Combined{}).Parse(t, &e) != nil {
		return ""
	}
	if bytes.Count(t, []byte{'"'}) >= 6 {
		return LooksCombined
	}
	return LooksCommon
}

// FormatError is a log most of whose first lines do not parse in the
// chosen format: it is refused, and the error says what it looks like.
type FormatError struct {
	// File is the log's name, Format the format it was read in.
	File, Format string
	// Sampled lines were looked at (up to SampleLines non-blank ones),
	// Skipped of them did not parse (or were too long, or not UTF-8).
	Sampled, Skipped int
	// LooksLike is what the skipped lines look like (a Looks* value), ""
	// when nothing known; NotText says why they are not text, when they
	// are not (robots.NotText).
	LooksLike, NotText string
	// First is the first skipped line's number and why.
	FirstLine  int64
	FirstCause string
	// Keys are the top-level keys of the first JSON line, for a JSON log
	// whose keys are not -json-fields'.
	Keys []string
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("read log %s: %d of its first %d lines do not parse as %s (line %d: %s)", e.File, e.Skipped, e.Sampled,
		e.Format, e.FirstLine, e.FirstCause)
	switch {
	case e.NotText != "":
		return s + fmt.Sprintf("; they are not text: %s (a log compressed other than with gzip?)", e.NotText)
	case e.LooksLike == LooksAudit:
		return s + "; they look like robotsproxy audit lines, the proxy's own log: summarise it with robotsproxy audit report"
	case e.LooksLike == LooksJSON && e.Format == "json":
		return s + fmt.Sprintf("; they look like JSON lines with other keys (%s): name them with -json-fields", strings.Join(e.Keys, ", "))
	case e.LooksLike == LooksJSON:
		return s + "; they look like JSON lines: give -log-format json (and -json-fields when its keys are not nginx's)"
	case e.LooksLike == LooksCombined && e.Format != "combined":
		return s + "; they look like the Combined Log Format: give -log-format combined"
	case e.LooksLike == LooksCommon && e.Format != "combined":
		return s + "; they look like the Common Log Format: give -log-format combined (it reads common too)"
	}
	return s + "; they look like no log format audit access-log reads (combined, common, JSON lines)"
}

// formatCheck decides, from a log's first SampleLines non-blank lines,
// whether it is in the chosen format.
type formatCheck struct {
	file, format     string
	sampled, skipped int
	decided          bool
	samples          [][]byte // copies of the first skipped lines, clipped
	firstLine        int64
	firstCause       string
}

// sampleBytes bounds each sample kept, and maxSamples their number.
const (
	sampleBytes = MaxLine // a whole line: a JSON line cut short is no JSON
	maxSamples  = 5
	maxKeys     = 12 // JSON keys named in a FormatError
)

// parsed counts a line that parsed.
func (c *formatCheck) parsed() {
	if !c.decided {
		c.sampled++
	}
}

// skip counts a skipped line: its number, why, and (when it was read) its
// octets.
func (c *formatCheck) skip(line int64, cause string, raw []byte) {
	if c.decided {
		return
	}
	c.sampled++
	c.skipped++
	if c.firstCause == "" {
		c.firstLine, c.firstCause = line, cause
	}
	if raw != nil && len(c.samples) < maxSamples {
		c.samples = append(c.samples, bytes.Clone(raw[:min(len(raw), sampleBytes)]))
	}
}

// check returns a *FormatError once the sample is complete (or at the
// log's end, eof) and most of it was skipped; nil otherwise.
func (c *formatCheck) check(eof bool) error {
	if c.decided || c.sampled < SampleLines && !eof {
		return nil
	}
	c.decided = true
	if c.skipped*2 <= c.sampled || c.sampled == 0 {
		return nil
	}
	e := &FormatError{File: c.file, Format: c.format, Sampled: c.sampled, Skipped: c.skipped, FirstLine: c.firstLine, FirstCause: c.firstCause}
	votes := map[string]int{}
	for _, s := range c.samples {
		if why := robots.NotText(s); why != "" {
			if e.NotText == "" {
				e.NotText = why
			}
			continue
		}
		votes[LooksLike(s)]++
	}
	best := 0
	for k, n := range votes {
		if n > best || n == best && k < e.LooksLike {
			e.LooksLike, best = k, n
		}
	}
	if e.LooksLike != "" {
		e.NotText = ""
	}
	for _, s := range c.samples {
		var m map[string]json.RawMessage
		if e.LooksLike == LooksJSON && json.Unmarshal(bytes.TrimSpace(s), &m) == nil {
			for k := range m {
				e.Keys = append(e.Keys, k)
			}
			slices.Sort(e.Keys)
			if len(e.Keys) > maxKeys {
				e.Keys = append(e.Keys[:maxKeys], "...")
			}
			break
		}
	}
	return e
}
