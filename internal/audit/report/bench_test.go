package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/report/loggen"
)

// The 1,000,000-line benchmark log: four files as lumberjack rotates them
// (the oldest gzipped), 10,000 hosts, twelve crawlers, about 750 MB.
// REPORT_BENCH_DIR keeps it between runs (it is written when missing).
func benchLog(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv("REPORT_BENCH_DIR")
	if dir == "" {
		dir = tb.TempDir()
	}
	if paths, _ := filepath.Glob(filepath.Join(dir, "audit*.log*")); len(paths) == 4 {
		return paths
	}
	paths, err := loggen.WriteRotated(dir, loggen.Config{Lines: 1_000_000, Hosts: 10_000, Chain: true}, 4)
	if err != nil {
		tb.Fatal(err)
	}
	return paths
}

func uncompressedSize(tb testing.TB, paths []string) int64 {
	var n int64
	for _, p := range paths {
		lr, _, c, err := openLog(p, nil)
		if err != nil {
			tb.Fatal(err)
		}
		m, _ := io.Copy(io.Discard, lr)
		c.Close()
		n += m
	}
	return n
}

// BenchmarkReport1M reads the 1,000,000-line log and renders the text
// report; it reports lines/s and the process's peak RSS (VmHWM, which
// includes the test binary and earlier benchmarks).
func BenchmarkReport1M(b *testing.B) {
	paths := benchLog(b)
	b.SetBytes(uncompressedSize(b, paths))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := Collect(paths, Options{Top: 50})
		if err != nil {
			b.Fatal(err)
		}
		if err := Render(io.Discard, rep, "text"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds(), "lines/s")
	if kb, ok := vmHWM(); ok {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MiB")
	}
}

func vmHWM() (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// TestReportProcess is the report alone in a process of its own, for
// TestCompare1M to measure; it does nothing unless REPORT_PROCESS names
// the logs (separated by commas) and the format.
func TestReportProcess(t *testing.T) {
	spec := os.Getenv("REPORT_PROCESS")
	if spec == "" {
		t.Skip("run by TestCompare1M")
	}
	format, list, _ := strings.Cut(spec, ":")
	top := 50
	if v := os.Getenv("REPORT_TOP"); v != "" {
		var err error
		if top, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Collect(strings.Split(list, ","), Options{Top: top})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(io.Discard)
	if err := Render(w, rep, format); err != nil {
		t.Fatal(err)
	}
}

// TestUniqueKeysRSS (opt-in: REPORT_RSS=1) measures the peak RSS of the
// report of 40,000 lines whose every key is new and 2 KiB long
// (loggen.WriteUnique), in every format with the command's default -top,
// each in a process of its own, and fails past 256 MiB.
func TestUniqueKeysRSS(t *testing.T) {
	if os.Getenv("REPORT_RSS") == "" {
		t.Skip("set REPORT_RSS=1 to measure the report's peak RSS on 40,000 lines of 2 KiB unique keys")
	}
	path := filepath.Join(t.TempDir(), "unique.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := loggen.WriteUnique(f, loggen.UniqueConfig{Lines: 40_000}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, c := range []struct {
		format string
		top    int
	}{{"text", 50}, {"json", 0}, {"csv", 0}, {"html", 50}} {
		cmd := exec.Command(self, "-test.run=^TestReportProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REPORT_PROCESS="+c.format+":"+path, "REPORT_TOP="+strconv.Itoa(c.top))
		row, kb := timedKB(t, "report -format "+c.format, cmd)
		rows = append(rows, row)
		if kb > 256<<10 {
			t.Errorf("-format %s: peak RSS %d MiB, want at most 256 MiB", c.format, kb>>10)
		}
	}
	t.Logf("40,000 lines of 2 KiB unique keys:\n%s", strings.Join(rows, "\n"))
}

// TestCompare1M (opt-in: REPORT_COMPARE=1) times this report, jq and
// DuckDB on the 1,000,000-line log under /usr/bin/time and logs them side
// by side. DuckDB runs when DUCKDB_DIR names a directory where
// "npm install @duckdb/node-api" was run.
func TestCompare1M(t *testing.T) {
	if os.Getenv("REPORT_COMPARE") == "" {
		t.Skip("set REPORT_COMPARE=1 to time the report against jq and DuckDB on 1,000,000 lines")
	}
	paths := benchLog(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, format := range []string{"text", "html"} {
		cmd := exec.Command(self, "-test.run=^TestReportProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REPORT_PROCESS="+format+":"+strings.Join(paths, ","))
		rows = append(rows, timed(t, "robotsproxy audit report -format "+format, cmd))
	}
	jq := `reduce inputs as $l ({}; .[($l.product_token // "-") + " " + $l.decision + " " + (($l.enforced // true) | tostring)] += 1)`
	if _, err := exec.LookPath("jq"); err == nil {
		cmd := exec.Command("sh", "-c", "zcat -f \"$@\" | jq -n '"+jq+"' > /dev/null", "sh")
		cmd.Args = append(cmd.Args, paths...)
		rows = append(rows, timed(t, "jq: count by token, decision, enforced", cmd))
	}
	if dir := os.Getenv("DUCKDB_DIR"); dir != "" {
		script := filepath.Join(dir, "report-compare.mjs")
		if err := os.WriteFile(script, []byte(duckScript), 0o644); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, timed(t, "DuckDB read_json: count by token, decision, enforced", exec.Command("node", append([]string{script}, paths...)...)))
	}
	t.Logf("1,000,000 lines, %d files:\n%s", len(paths), strings.Join(rows, "\n"))
}

const duckScript = `import { DuckDBInstance } from '@duckdb/node-api';
const files = process.argv.slice(2).map(f => "'" + f + "'").join(',');
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await inst.connect();
const r = await con.runAndReadAll("SELECT product_token, decision, coalesce(enforced, true) AS enforced, count(*) AS n " +
  "FROM read_json([" + files + "], format='newline_delimited', ignore_errors=true, " +
  "columns={time:'VARCHAR', product_token:'VARCHAR', decision:'VARCHAR', enforced:'BOOLEAN'}) GROUP BY ALL");
console.log(r.getRowObjects().length, 'groups');
`

// timed runs cmd under /usr/bin/time and returns "what: wall, user+sys,
// peak RSS".
func timed(t *testing.T, what string, cmd *exec.Cmd) string {
	t.Helper()
	row, _ := timedKB(t, what, cmd)
	return row
}

// timedKB is timed, and returns the peak RSS in KiB too.
func timedKB(t *testing.T, what string, cmd *exec.Cmd) (string, int) {
	t.Helper()
	cmd.Args = append([]string{"/usr/bin/time", "-f", "TIME %e %U %S %M"}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stderr.String())
	}
	m := regexp.MustCompile(`TIME (\S+) (\S+) (\S+) (\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("%s: no timing in %q", what, stderr.String())
	}
	kb, _ := strconv.Atoi(m[4])
	return fmt.Sprintf("%-58s wall %6s s  user %6s s  sys %5s s  peak RSS %5d MiB", what, m[1], m[2], m[3], kb/1024), kb
}
