package live

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// Printer writes the events of a stream as robotsproxy watch prints
// them: on a terminal one line per decision, in colour when Color is set;
// else (JSON) each decision's audit line exactly as the log has it, and
// {"skipped":N} where the stream skipped N.
type Printer struct {
	Out io.Writer
	// Terminal selects the terminal form; Color colours it (ANSI).
	Terminal, Color bool
	// Width, when positive, is the terminal's width in columns: the URL
	// is cut so that a line fits.
	Width int
}

// ANSI colours of the terminal form.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
)

// Print writes ev; hello and unknown events print nothing (Hello reads
// hello).
func (p *Printer) Print(ev Event) error {
	switch ev.Name {
	case EventDecision:
		var d DecisionData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return fmt.Errorf("a decision event that is not JSON: %w", err)
		}
		if !p.Terminal {
			_, err := fmt.Fprintf(p.Out, "%s\n", d.Line)
			return err
		}
		_, err := io.WriteString(p.Out, p.line(d)+"\n")
		return err
	case EventSkipped:
		var s SkippedData
		if err := json.Unmarshal(ev.Data, &s); err != nil {
			return fmt.Errorf("a skipped event that is not JSON: %w", err)
		}
		if !p.Terminal {
			_, err := fmt.Fprintf(p.Out, "{\"skipped\":%d}\n", s.Skipped)
			return err
		}
		_, err := io.WriteString(p.Out, p.paint(ansiYellow, fmt.Sprintf("... %d decisions skipped: this watch fell behind", s.Skipped))+"\n")
		return err
	}
	return nil
}

func (p *Printer) paint(color, s string) string {
	if !p.Color || s == "" {
		return s
	}
	return color + s + ansiReset
}

// line is a decision in one terminal line: time, decision, status,
// product token, method, URL, reason and, for a refusal, what the 403
// body says (the robots.txt URL, the rule's line and the rule), and the
// start of the line's SHA-256.
func (p *Printer) line(d DecisionData) string {
	var l map[string]json.RawMessage
	if json.Unmarshal(d.Line, &l) != nil {
		return string(d.Line)
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(l[k], &s) != nil {
			return string(l[k])
		}
		return s
	}
	if _, ok := l[auditlog.FieldDecision]; !ok { // the lost-lines marker
		return p.paint(ansiYellow, "... "+string(d.Line))
	}
	when := str(auditlog.FieldTime)
	if t, err := time.Parse(time.RFC3339Nano, when); err == nil {
		when = t.Local().Format("15:04:05")
	}
	decision, color := str(auditlog.FieldDecision), ansiDim
	switch {
	case decision == auditlog.DecisionAllow:
		color = ansiGreen
	case decision == auditlog.DecisionDeny && string(l[auditlog.FieldEnforced]) == "false":
		decision, color = "deny(report)", ansiYellow
	case decision == auditlog.DecisionDeny:
		color = ansiRed
	}
	token := str(auditlog.FieldToken)
	if token == "" {
		token = "-"
	}
	head := fmt.Sprintf("%s %s %s %s %s ", p.paint(ansiDim, when), p.paint(color, fmt.Sprintf("%-5s", decision)),
		str(auditlog.FieldStatus), p.paint(ansiBold, token), str(auditlog.FieldMethod))
	tail := " " + str(auditlog.FieldReason)
	if why := detail(l, str); why != "" {
		tail += ": " + why
	}
	if d.SHA256 != "" {
		tail += " " + p.paint(ansiDim, d.SHA256[:12])
	}
	url := str(auditlog.FieldURL)
	if p.Width > 0 {
		room := p.Width - visible(head) - visible(tail)
		if room < 20 {
			room = 20
		}
		if len(url) > room {
			url = url[:room-1] + "…"
		}
	}
	return head + url + tail
}

// detail is what a refusal's 403 body says of it: the robots.txt URL, the
// rule's line and the rule; else the error or cause the line records.
func detail(l map[string]json.RawMessage, str func(string) string) string {
	if str(auditlog.FieldDecision) != auditlog.DecisionDeny {
		return ""
	}
	if str(auditlog.FieldReason) == auditlog.ReasonRule && str(auditlog.FieldRobotsURL) != "" {
		return str(auditlog.FieldRobotsURL) + " line " + str(auditlog.FieldRuleLine) + ": " + str(auditlog.FieldRule)
	}
	for _, k := range []string{auditlog.FieldUsageRule, auditlog.FieldUnreachableCause, auditlog.FieldError} {
		if _, ok := l[k]; ok {
			return str(k)
		}
	}
	return ""
}

// visible is the width of s on a terminal: its runes, escapes left out.
func visible(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc:
			esc = r != 'm'
		default:
			n++
		}
	}
	return n
}

// Hello is the hello event's data, for a first line on standard error.
func Hello(ev Event) (HelloData, error) {
	var h HelloData
	err := json.Unmarshal(ev.Data, &h)
	return h, err
}

// Describe says in words what a hello announces: the replica and the
// filter in force.
func (h HelloData) Describe() string {
	var f []string
	for _, k := range []string{paramToken, paramHost, paramDecision, paramReason} {
		if vs := h.Filter[k]; len(vs) > 0 {
			f = append(f, k+"="+strings.Join(vs, ","))
		}
	}
	what := "every decision"
	if len(f) > 0 {
		what = "decisions with " + strings.Join(f, " ")
	}
	return fmt.Sprintf("watching %s of replica %s (%d recent kept)", what, h.Replica, h.Kept)
}
