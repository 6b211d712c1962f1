package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// Integrity statuses.
const (
	// IntegrityVerified: the hash chain was checked and holds.
	IntegrityVerified = "verified"
	// IntegrityFailed: the hash chain was checked and does not hold.
	IntegrityFailed = "failed"
	// IntegrityNotVerified: the chain was not checked; Reason says why.
	IntegrityNotVerified = "not verified"
)

// Integrity is what the report can say of the logs it summarises: whether
// their hash chain holds, checked by verify.Verify with ChainOnly, the
// check "robotsproxy audit verify -chain-only" makes (the decisions are
// not re-decided: that needs the robots.txt archive, and is audit
// verify's). Hashes are lower-case hex SHA-256.
type Integrity struct {
	// Status is IntegrityVerified, IntegrityFailed or
	// IntegrityNotVerified.
	Status string `json:"status"`
	// Reason says why the chain was not checked, or the first problem
	// found ("file:line: kind: message") when it does not hold.
	Reason string `json:"reason,omitempty"`
	// Lines is the lines the check read, Problems how many do not verify
	// (broken links, lines that are not JSON, anchors missed).
	Lines    int `json:"lines,omitempty"`
	Problems int `json:"problems,omitempty"`
	// ChainBreaks counts broken links.
	ChainBreaks int `json:"chain_breaks,omitempty"`
	// FirstLineSHA256 is the hash of the chain's first line and
	// LastLineSHA256 that of its last line (its head: keep it elsewhere
	// to anchor the chain); StartPrev is the first line's prev, 64 zeros
	// when the logs start the chain (then Genesis, when the chain holds).
	FirstLineSHA256 string `json:"first_line_sha256,omitempty"`
	LastLineSHA256  string `json:"last_line_sha256,omitempty"`
	StartPrev       string `json:"start_prev,omitempty"`
	Genesis         bool   `json:"genesis,omitempty"`
	// Checkpoints is the checkpoints (-checkpoints) the chain had to pass
	// through, CheckpointsPassed those it passed in order; both 0 when no
	// checkpoint log was given.
	Checkpoints       int `json:"checkpoints"`
	CheckpointsPassed int `json:"checkpoints_passed"`
	// NotJSON counts the lines read that are not JSON: not a JSON object,
	// cut short, or longer than the 1 MiB a line may take. It is counted
	// whether or not the chain was checked.
	NotJSON uint64 `json:"not_json"`
}

// ChainCheck asks Collect to check the logs' hash chain (see Integrity).
// The zero value checks the chain alone.
type ChainCheck struct {
	// Checkpoints, when not nil, must be passed through (see
	// verify.VerifyOptions.Checkpoints).
	Checkpoints []audit.Checkpoint
	// Head, when not nil, is where the chain must end.
	Head *[sha256.Size]byte
}

// notJSON are the skip reasons of a line that is not JSON.
var notJSON = []string{auditlog.ErrSyntax.Error(), auditlog.ErrTruncated.Error(), auditlog.ErrTooLong.Error()}

// verifyChain checks the chain of the logs, named in the order the report
// reads them. It runs alongside the report's own reading.
func verifyChain(names []string, c *ChainCheck) Integrity {
	var first string
	problems := 0
	o := verify.VerifyOptions{ChainOnly: true, Checkpoints: c.Checkpoints, Head: c.Head, Report: func(p verify.Problem) {
		if problems == 0 {
			first = p.String()
		}
		problems++
	}}
	res, err := verify.Verify(names, o)
	if err != nil {
		return Integrity{Status: IntegrityNotVerified, Reason: fmt.Sprintf("the chain check could not read the logs: %v", err)}
	}
	in := Integrity{Status: IntegrityVerified, Lines: res.Lines, Problems: problems, ChainBreaks: res.ChainBreaks,
		Checkpoints: res.Checkpoints, CheckpointsPassed: res.CheckpointsPassed}
	in.FirstLineSHA256, in.LastLineSHA256 = hex.EncodeToString(res.First[:]), hex.EncodeToString(res.Head[:])
	in.StartPrev = hex.EncodeToString(res.StartPrev[:])
	if res.Lines == res.Operational {
		return Integrity{Status: IntegrityNotVerified, Reason: "the logs have no audit line to check"}
	}
	if !res.OK(true) {
		in.Status, in.Reason = IntegrityFailed, first
	} else {
		in.Genesis = res.StartPrev == [sha256.Size]byte{}
	}
	return in
}

// unverified is the Integrity of a report whose chain was not checked.
func unverified(names []string, c *ChainCheck) Integrity {
	switch {
	case c == nil:
		return Integrity{Status: IntegrityNotVerified, Reason: "not asked for (-verify=false): nothing in this report shows that the logs are complete and unedited"}
	case slices.Contains(names, "-"):
		return Integrity{Status: IntegrityNotVerified, Reason: "standard input is read once, so its chain cannot be checked too: give the log as a file"}
	}
	for _, n := range names {
		if fi, err := os.Stat(n); err == nil && !fi.Mode().IsRegular() {
			return Integrity{Status: IntegrityNotVerified, Reason: n + " is not a regular file: it is read once, so its chain cannot be checked too: give the log as a file"}
		}
	}
	return Integrity{}
}

// integrityTable is the Integrity block as item and value rows.
func integrityTable(in Integrity) table {
	t := table{name: "integrity", title: "Integrity of the logs", whole: true, cols: []column{col("item", "item"), col("value", "value")},
		about: "Each audit line carries the SHA-256 of the line before it (prev): a line deleted, inserted, edited or moved breaks the chain."}
	add := func(k string, v any) { t.rows = append(t.rows, []any{k, cellText(v)}) }
	add("hash chain", chainVerdict(in))
	if in.Reason != "" {
		add("why", in.Reason)
	}
	if in.Status != IntegrityNotVerified {
		add("lines checked", uint64(in.Lines))
		add("problems", uint64(in.Problems))
	}
	if in.Status == IntegrityVerified {
		start := "continues a chain whose earlier lines were not given"
		if in.Genesis {
			start = "genesis: the logs start the chain"
		}
		add("chain start", start)
	}
	if in.FirstLineSHA256 != "" {
		add("first line sha256", in.FirstLineSHA256)
		add("last line sha256 (head)", in.LastLineSHA256)
	}
	if in.Status != IntegrityNotVerified {
		cp := "none given (-checkpoints)"
		if in.Checkpoints > 0 {
			cp = fmt.Sprintf("%d of %d passed", in.CheckpointsPassed, in.Checkpoints)
		}
		add("checkpoints", cp)
	}
	add("lines that are not JSON", in.NotJSON)
	return t
}

// chainVerdict is the integrity status in a sentence.
func chainVerdict(in Integrity) string {
	switch in.Status {
	case IntegrityVerified:
		return "VERIFIED: every line links to the one before it"
	case IntegrityFailed:
		return "FAILED: the chain does not hold"
	}
	return "NOT VERIFIED"
}
