package report

import (
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// TestVerifyAndReportAgree feeds malformed lines through both commands'
// reading paths, audit verify (verify.Verify) and audit report (Collect):
// each is a bad line to both, or a good line to both, as encoding/json
// would have it.
func TestVerifyAndReportAgree(t *testing.T) {
	const head = `{"time":"2026-11-22T10:00:00Z","url":"https://b.example/","decision":"allow","reason":"not-proxied",`
	for _, c := range []struct {
		name, member string
		bad          bool
	}{
		{"literal cut short", `"x":tru`, true},
		{"raw tab in a string", "\"x\":\"a\tb\"", true},
		{"65 deep", `"x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65), false},
		{"literal run on", `"x":nullx`, true},
		{"mismatched brackets", `"x":[}`, true},
		{"as long as the line limit", `"x":"` + strings.Repeat("a", auditlog.MaxLineBytes-len(head)-7) + `"`, false},
		{"one octet over the line limit", `"x":"` + strings.Repeat("a", auditlog.MaxLineBytes-len(head)-6) + `"`, true},
		{"between the former limits", `"x":"` + strings.Repeat("a", 2<<20) + `"`, true},
		{"well formed", `"x":[{"y":null}]`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := writeFile(t, t.TempDir(), "audit.log", head+c.member+"}\n")
			badVerify := 0
			if _, err := verify.Verify([]string{name}, verify.VerifyOptions{Report: func(p verify.Problem) {
				if p.Kind == verify.KindBadLine {
					badVerify++
				}
			}}); err != nil {
				t.Fatal(err)
			}
			rep, err := Collect([]string{name}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			badReport := rep.Inputs[0].Skipped
			want := 0
			if c.bad {
				want = 1
			}
			if badVerify != want || badReport != uint64(want) {
				t.Errorf("bad lines: verify %d, report %d; want %d for both", badVerify, badReport, want)
			}
		})
	}
}
