package verify_test

import (
	"crypto/sha256"
	"os"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// TestVerifyChainOnly: with ChainOnly no decision is re-decided (none is
// unverifiable without an archive) and an intact chain is OK; an edited
// line still breaks it.
func TestVerifyChainOnly(t *testing.T) {
	f := newFixture(t)
	logs := []string{f.backup, f.current}
	res, err := verify.Verify(logs, verify.VerifyOptions{ChainOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK(false) || res.Unverifiable != 0 || res.Decisions != 0 || res.ChainOnly != 20 || res.Lines != 20 {
		t.Errorf("chain only: got %+v, want OK, 20 lines chained only, none unverifiable", res)
	}
	editLines(t, f.current, func(lines []string) []string {
		lines[2] = strings.Replace(lines[2], `"decision":"allow"`, `"decision":"deny"`, 1)
		return lines
	})
	if res, err = verify.Verify(logs, verify.VerifyOptions{ChainOnly: true}); err != nil {
		t.Fatal(err)
	}
	if res.OK(false) || res.ChainBreaks != 1 {
		t.Errorf("chain only, a line edited: got OK %v, %d breaks, want not OK, 1 break", res.OK(false), res.ChainBreaks)
	}
}

// TestVerifyOperationalLines: the proxy's own log messages among the audit
// lines are counted apart, are not problems, and do not break the chain.
func TestVerifyOperationalLines(t *testing.T) {
	f := newFixture(t)
	op := `{"level":"info","listener":"proxy","addr":"127.0.0.1:8080","time":"2026-11-22T20:10:49Z","message":"listening"}`
	editLines(t, f.current, func(lines []string) []string {
		out := []string{op + "\n"}
		for _, l := range lines {
			if l != "" {
				out = append(out, l, `{"level":"warn","time":"2026-11-22T20:10:50Z","message":"shared store unreachable"}`+"\n")
			}
		}
		return out
	})
	var problems []verify.Problem
	res, err := verify.Verify([]string{f.backup, f.current}, verify.VerifyOptions{Archive: f.archive, Report: func(p verify.Problem) { problems = append(problems, p) }})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(f.current)
	if !res.OK(false) || len(problems) != 0 || res.Operational != 11 || res.Verified != 18 {
		t.Errorf("got %+v, problems %v, want OK, 11 operational, 18 verified; log:\n%s", res, problems, raw)
	}
}

// TestVerifyFirstLineHash: First is the SHA-256 of the first chained line
// with its newline (an operational line before it is not chained), Head
// that of the last.
func TestVerifyFirstLineHash(t *testing.T) {
	f := newFixture(t)
	var first string
	editLines(t, f.backup, func(lines []string) []string {
		first = lines[0]
		return append([]string{`{"level":"info","message":"listening"}` + "\n"}, lines...)
	})
	cur, err := os.ReadFile(f.current)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(cur), "\n"), "\n")
	res, err := verify.Verify([]string{f.backup, f.current}, verify.VerifyOptions{ChainOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256([]byte(first)); res.First != want {
		t.Errorf("First: got %x, want %x", res.First, want)
	}
	if want := sha256.Sum256([]byte(lines[len(lines)-1] + "\n")); res.Head != want {
		t.Errorf("Head: got %x, want %x", res.Head, want)
	}
}
