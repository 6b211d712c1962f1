package e2e

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/audit"
)

// checkForgedAppends appends to the log, one at a time, a forged line of
// each reason that carries a decision, its prev correctly recomputed, and
// checks that "audit verify" exits 1 naming that line with the right kind.
// rawLines are the log's lines (with their newlines), lines the same
// decoded.
func checkForgedAppends(t *testing.T, archive string, rawLines []string, lines []map[string]any) string {
	t.Helper()
	find := func(decision string, reasons ...string) string {
		for i, l := range lines {
			for _, r := range reasons {
				if l["decision"] == decision && l["reason"] == r && l["method"] == "GET" {
					return rawLines[i]
				}
			}
		}
		t.Fatalf("no %s line with reason %v in the log", decision, reasons)
		return ""
	}
	denied := find("deny", "rule")
	allowed := find("allow", "rule", "no-matching-rule")
	allowedReason := `"reason":"` + fmt.Sprint(lines[indexOf(rawLines, allowed)]["reason"]) + `"`
	tests := []struct {
		name     string
		base     string
		from, to string
		kind     string
	}{
		{"implicit-robots-txt on a disallowed path", denied, `"decision":"deny","reason":"rule"`, `"decision":"allow","reason":"implicit-robots-txt"`, "decision"},
		{"crawl-delay without robots_reason", allowed, allowedReason, `"reason":"crawl-delay"`, "decision"},
		{"backoff without robots_reason", allowed, allowedReason, `"reason":"backoff"`, "decision"},
		{"host-concurrency without robots_reason", allowed, allowedReason, `"reason":"host-concurrency"`, "decision"},
		{"crawl-delay allowing a disallowed path", denied, `"decision":"deny","reason":"rule"`, `"decision":"allow","reason":"crawl-delay","robots_reason":"rule"`, "decision"},
		{"override (no -config)", denied, `"decision":"deny","reason":"rule"`, `"decision":"allow","reason":"override"`, "unverifiable"},
		{"usage-preference allowing", allowed, `"decision":"allow",` + allowedReason, `"decision":"allow","reason":"usage-preference","usage_refused":"train-ai"`, "decision"},
		{"host-denied allowing", denied, `"decision":"deny","reason":"rule"`, `"decision":"allow","reason":"host-denied"`, "decision"},
	}
	dir := t.TempDir()
	prev := sha256.Sum256([]byte(rawLines[len(rawLines)-1]))
	for i, tt := range tests {
		if !strings.Contains(tt.base, tt.from) {
			t.Fatalf("%s: no %s in %s", tt.name, tt.from, tt.base)
		}
		line := strings.Replace(tt.base, tt.from, tt.to, 1)
		stripped := line[:len(line)-len(`,"prev":"`)-64-3] + "}\n" // AppendPrev adds it back
		forged := string(audit.AppendPrev(nil, []byte(stripped), prev))
		log := filepath.Join(dir, fmt.Sprintf("forged-%d.log", i))
		writeLines(t, log, append(append([]string{}, rawLines...), forged))
		wantVerify(t, "appended: "+tt.name, archive, log, 1, []verifyProblem{{log, len(rawLines) + 1, tt.kind}})
	}
	return fmt.Sprintf("%d forged appends (implicit-robots-txt, politeness, override, usage-preference, host-denied) fail", len(tests))
}

func indexOf(l []string, s string) int {
	for i, e := range l {
		if e == s {
			return i
		}
	}
	return -1
}
