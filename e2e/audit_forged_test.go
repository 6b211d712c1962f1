package e2e

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit"
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

	// override against the configuration given with -config: an exempt
	// host verifies, another does not.
	m := regexp.MustCompile(`"url":"(http://([^":/]+)[^"]*)"`).FindStringSubmatch(denied)
	if m == nil {
		t.Fatalf("no url in %s", denied)
	}
	line := `{"method":"GET","url":"` + m[1] + `","decision":"allow","reason":"override","enforced":true,"status":200}` + "\n"
	log := filepath.Join(dir, "override.log")
	writeLines(t, log, append(append([]string{}, rawLines...), string(audit.AppendPrev(nil, []byte(line), prev))))
	for _, c := range []struct {
		exempt string
		code   int
		probs  []verifyProblem
	}{
		{m[2], 0, nil},
		{"example.com", 1, []verifyProblem{{log, len(rawLines) + 1, "decision"}}},
	} {
		cfg := filepath.Join(dir, "config-"+c.exempt+".yaml")
		writeLines(t, cfg, []string{"exempt_hosts: [\"" + c.exempt + "\"]\n"})
		stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, "-config", cfg, log)
		var probs []verifyProblem
		for _, l := range strings.Split(stdout, "\n") {
			if m := problemLine.FindStringSubmatch(l); m != nil && m[1] == log {
				n, _ := strconv.Atoi(m[2])
				probs = append(probs, verifyProblem{m[1], n, m[3]})
			}
		}
		if code != c.code || fmt.Sprint(probs) != fmt.Sprint(c.probs) {
			t.Errorf("audit verify -config (exempt_hosts %s), override line appended: got exit code %d and problems %v, want %d and %v; output:\n%s%s",
				c.exempt, code, probs, c.code, c.probs, stdout, stderr)
		}
	}
	return fmt.Sprintf("%d forged appends (implicit-robots-txt, politeness, override, usage-preference, host-denied) fail; override checked against -config", len(tests))
}

func indexOf(l []string, s string) int {
	for i, e := range l {
		if e == s {
			return i
		}
	}
	return -1
}
