package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/report/loggen"
)

// chainedLog writes a chained audit log of n lines and returns its path
// and lines (each with its newline).
func chainedLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	var b bytes.Buffer
	if err := loggen.Write(&b, loggen.Config{Lines: n, Hosts: 5, Chain: true}); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, t.TempDir(), "audit.log", b.String())
	lines := strings.SplitAfter(b.String(), "\n")
	return p, lines[:len(lines)-1]
}

func hashOf(line string) string {
	h := sha256.Sum256([]byte(line))
	return hex.EncodeToString(h[:])
}

func TestIntegrityVerified(t *testing.T) {
	p, lines := chainedLog(t, 200)
	ck := audit.Checkpoint{Head: hashOf(lines[99]), Lines: 100, Time: time.Date(2026, 11, 1, 0, 0, 30, 0, time.UTC)}
	rep, err := Collect([]string{p}, Options{Verify: &ChainCheck{Checkpoints: []audit.Checkpoint{ck}}})
	if err != nil {
		t.Fatal(err)
	}
	want := Integrity{Status: IntegrityVerified, Lines: 200, FirstLineSHA256: hashOf(lines[0]), LastLineSHA256: hashOf(lines[199]),
		StartPrev: strings.Repeat("0", 64), Genesis: true, Checkpoints: 1, CheckpointsPassed: 1}
	if rep.Integrity != want {
		t.Errorf("integrity:\ngot  %+v\nwant %+v", rep.Integrity, want)
	}
}

func TestIntegrityFailed(t *testing.T) {
	p, lines := chainedLog(t, 50)
	lines[10] = strings.Replace(lines[10], `"decision":"`, `"decision":"x`, 1)
	lines = append(lines, "not json at all\n")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Collect([]string{p}, Options{Verify: &ChainCheck{}})
	if err != nil {
		t.Fatal(err)
	}
	in := rep.Integrity
	if in.Status != IntegrityFailed || in.ChainBreaks != 1 || in.NotJSON != 1 || in.Problems != 2 ||
		!strings.HasPrefix(in.Reason, p+":12: chain: ") {
		t.Errorf("integrity of an edited log: got %+v, want failed, 1 break at line 12, 1 line not JSON", in)
	}
}

func TestIntegrityNotVerified(t *testing.T) {
	p, lines := chainedLog(t, 20)
	for _, c := range []struct {
		name   string
		logs   []string
		verify *ChainCheck
		why    string
	}{
		{"not asked", []string{p}, nil, "not asked for (-verify=false)"},
		{"stdin", []string{"-"}, &ChainCheck{}, "standard input is read once"},
		{"no audit line", []string{writeFile(t, t.TempDir(), "empty.log", "")}, &ChainCheck{}, "no audit line"},
	} {
		rep, err := Collect(c.logs, Options{Verify: c.verify, Stdin: strings.NewReader(strings.Join(lines, ""))})
		if err != nil {
			t.Fatal(err)
		}
		if in := rep.Integrity; in.Status != IntegrityNotVerified || !strings.Contains(in.Reason, c.why) || in.FirstLineSHA256 != "" {
			t.Errorf("%s: got %+v, want not verified because %q", c.name, in, c.why)
		}
	}
}

// Every format carries the integrity block, and says plainly when the
// chain was not checked.
func TestIntegrityInEveryFormat(t *testing.T) {
	p, lines := chainedLog(t, 30)
	for _, verify := range []*ChainCheck{{}, nil} {
		rep, err := Collect([]string{p}, Options{Verify: verify})
		if err != nil {
			t.Fatal(err)
		}
		head, verdict := hashOf(lines[29]), "VERIFIED"
		if verify == nil {
			head, verdict = "", "NOT VERIFIED"
		}
		out := map[string]string{}
		for _, f := range Formats() {
			var b bytes.Buffer
			if err := Render(&b, rep, f); err != nil {
				t.Fatal(err)
			}
			out[f] = b.String()
		}
		var table bytes.Buffer
		if err := WriteCSVTable(&table, rep, "integrity"); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string][]string{
			"text":      {"== Integrity of the logs ==", "hash chain               " + verdict, "lines that are not JSON  0"},
			"csv":       {"section,item,value", "integrity,hash chain," + verdict},
			"csv table": {"item,value\nhash chain," + verdict},
			"html":      {`<section id="integrity"`, "Hash chain: " + verdict},
		} {
			got := out[name]
			if name == "csv table" {
				got = table.String()
			}
			for _, w := range append(want, head) {
				if !strings.Contains(got, w) {
					t.Errorf("%s (verify %v): want %q in it", name, verify != nil, w)
				}
			}
		}
		var j struct{ Integrity map[string]any }
		if err := json.Unmarshal([]byte(out["json"]), &j); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: IntegrityVerified, false: IntegrityNotVerified}[verify != nil]; j.Integrity["status"] != want ||
			j.Integrity["not_json"] != 0.0 {
			t.Errorf("json integrity %v, want status %q", j.Integrity, want)
		}
	}
}
