package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// diskOrigin serves robots.txt disallowing /private and a short body
// naming the path everywhere else; it counts the requests that reach it.
func diskOrigin(t *testing.T) *testkit.Site {
	t.Helper()
	return testkit.NewSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "origin:"+r.URL.Path+"\n")
	}))
}

// answer is what a client got for one request.
type answer struct {
	path   string
	status int    // 0: no whole answer (the connection was cut)
	reason string // X-Robotsproxy-Reason
}

// drive sends n requests with unique paths (every third disallowed),
// numbered from first, one connection each, and returns the answers.
func drive(t *testing.T, proxyAddr, origin string, first, n int) []answer {
	t.Helper()
	pu, _ := url.Parse("http://" + proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true},
		Timeout: 10 * time.Second}
	var out []answer
	for i := first; i < first+n; i++ {
		path := fmt.Sprintf("/page/%d", i)
		if i%3 == 0 {
			path = fmt.Sprintf("/private/%d", i)
		}
		a := answer{path: path}
		req, _ := http.NewRequest(http.MethodGet, origin+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		if resp, err := client.Do(req); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil {
				a.status, a.reason = resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason")
			}
		}
		out = append(out, a)
	}
	return out
}

// mountTmpfs mounts a tmpfs of size at a new directory and unmounts it
// when the test ends; it skips the test when that is not possible.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (the CI machine runs the e2e tests as root)")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (a container without CAP_SYS_ADMIN?): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a filler file into dir until the filesystem is full, then
// gives back leave octets, and returns the filler's path.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := bytes.Repeat([]byte("f"), 4096)
	var n int64
	for {
		w, err := f.Write(block)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(max(n-leave, 0)); err != nil {
		t.Fatal(err)
	}
	return path
}

// readLog returns the log's lines, each of which must be a JSON object.
func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("%s does not end in a newline: a cut line", path)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("%s:%d is not one JSON object (a merged or cut line): %v: %.200q", path, n, err, sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

// TestAuditDiskFull: the audit log on a real tmpfs that fills up. With
// audit.on_write_error refuse (the default), every answer other than 503
// audit-unavailable has exactly one line; with continue, every request is
// answered as decided and each one without its line is counted in the
// lost-lines markers. Either way no line is merged or cut, the marker is
// in the chain once space is back, and audit verify passes over the whole
// file. The first request after space returns is served as decided.
func TestAuditDiskFull(t *testing.T) {
	for _, mode := range []string{"refuse", "continue"} {
		t.Run(mode, func(t *testing.T) { testAuditDiskFull(t, mode) })
	}
}

func testAuditDiskFull(t *testing.T, mode string) {
	dir := mountTmpfs(t, "256k")
	origin := diskOrigin(t)
	logPath := filepath.Join(dir, "audit.log")
	p := startProxy(t, fmt.Sprintf("log:\n  file: %s\naudit:\n  chain: true\n  on_write_error: %s\n", logPath, mode))

	answers := drive(t, p.proxyAddr, origin.URL, 0, 20) // robots.txt cached, the log started
	filler := fill(t, dir, 8<<10)
	answers = append(answers, drive(t, p.proxyAddr, origin.URL, 20, 300)...)
	hitsWhileFull := origin.Pages()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := len(answers) // the first answer after space returned
	answers = append(answers, drive(t, p.proxyAddr, origin.URL, 320, 100)...)
	p.stop(t)

	perPath := map[string]int{}
	marker, lost := false, 0
	for _, l := range readLog(t, logPath) {
		if u, ok := l["url"].(string); ok {
			perPath[strings.TrimPrefix(u, origin.URL)]++
		}
		if n, ok := l["lost_lines"].(float64); ok {
			marker, lost = true, lost+int(n)
			if l["on_write_error"] != mode {
				t.Errorf("marker %v: want on_write_error %q", l, mode)
			}
		}
	}
	if mode == "continue" {
		checkContinue(t, answers, perPath, lost, marker)
	} else {
		checkRefuse(t, answers, perPath, marker, hitsWhileFull, p)
	}
	// The first request after space returned is served as decided, with
	// its one line, not refused (the log is written to again first).
	if a := answers[freed]; a.status != map[bool]int{true: 403, false: 200}[strings.HasPrefix(a.path, "/private/")] || perPath[a.path] != 1 {
		t.Errorf("first request after space returned: %s answered %d %q with %d lines, want as decided with 1 line",
			a.path, a.status, a.reason, perPath[a.path])
	}
	if out, errOut, code := runBinary(t, "", "audit", "verify", logPath); code != 0 {
		t.Errorf("audit verify: exit %d, want 0:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(p.stderr.String(), "audit log write failed") {
		t.Errorf("no operational error line on stderr")
	}
}

// checkContinue: every request answered as decided (200 or 403), each
// with one line or counted as lost.
func checkContinue(t *testing.T, answers []answer, perPath map[string]int, lost int, marker bool) {
	t.Helper()
	without := 0
	for _, a := range answers {
		if want := map[bool]int{true: 403, false: 200}[strings.HasPrefix(a.path, "/private/")]; a.status != want {
			t.Errorf("%s: got %d, want %d (continue answers as decided)", a.path, a.status, want)
		}
		switch perPath[a.path] {
		case 0:
			without++
		case 1:
		default:
			t.Errorf("%s: %d lines", a.path, perPath[a.path])
		}
	}
	t.Logf("%d requests answered, %d without their line, %d lost lines in the markers", len(answers), without, lost)
	if without == 0 || !marker {
		t.Fatalf("no line was lost (marker %v): the filesystem never filled up", marker)
	}
	if lost != without {
		t.Errorf("the markers count %d lost lines, but %d answers have no line", lost, without)
	}
}

// checkRefuse: every answer but 503 audit-unavailable has its one line;
// a request cut off has none.
func checkRefuse(t *testing.T, answers []answer, perPath map[string]int, marker bool, hitsWhileFull int64, p *proxyProcess) {
	t.Helper()
	var refused, cut, answered int
	for _, a := range answers {
		switch {
		case a.status == http.StatusServiceUnavailable && a.reason == "audit-unavailable":
			refused++
			if perPath[a.path] > 1 {
				t.Errorf("%s: refused 503 audit-unavailable, %d lines", a.path, perPath[a.path])
			}
		case a.status == 0:
			cut++
			if perPath[a.path] != 0 {
				t.Errorf("%s: cut off, yet %d lines", a.path, perPath[a.path])
			}
		default:
			answered++
			if perPath[a.path] != 1 {
				t.Errorf("%s: answered %d (%s) with %d audit lines, want 1", a.path, a.status, a.reason, perPath[a.path])
			}
		}
	}
	t.Logf("%d requests: %d answered with their line, %d refused 503 audit-unavailable, %d cut off; %d reached the origin before the filler was removed (warm-up included)",
		len(answers), answered, refused, cut, hitsWhileFull)
	if refused == 0 {
		t.Fatalf("no request was refused: the filesystem never filled up (stderr:\n%s)", p.stderr)
	}
	if !marker {
		t.Errorf("no lost_lines marker line in the log")
	}
	if last := answers[len(answers)-1]; last.status == http.StatusServiceUnavailable {
		t.Errorf("still refusing after space came back: %+v", last)
	}
}

// TestAuditCheckpointsServe: serve with audit.checkpoint_file (signed),
// traffic, SIGTERM; audit verify -checkpoints passes, and fails once the
// log's last lines are deleted.
func TestAuditCheckpointsServe(t *testing.T) {
	origin := diskOrigin(t)
	dir := t.TempDir()
	logPath, cpPath, keyPath := filepath.Join(dir, "audit.log"), filepath.Join(dir, "checkpoints"), filepath.Join(dir, "key")
	if err := os.WriteFile(keyPath, []byte("a checkpoint key of the operator\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, fmt.Sprintf("log:\n  file: %s\naudit:\n  checkpoint_file: %s\n  checkpoint_every_lines: 40\n  checkpoint_hmac_key_file: %s\n",
		logPath, cpPath, keyPath))
	drive(t, p.proxyAddr, origin.URL, 0, 150)
	p.stop(t)
	if strings.Contains(p.stderr.String(), "a checkpoint key of the operator") {
		t.Errorf("the checkpoint key appears on stderr")
	}
	cps, err := os.ReadFile(cpPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(cps, []byte("\n")); n < 4 {
		t.Errorf("%d checkpoints for 150 lines every 40 and at shutdown, want at least 4:\n%s", n, cps)
	}
	verify := func() (string, int) {
		out, errOut, code := runBinary(t, "", "audit", "verify", "-checkpoints", cpPath, "-checkpoint-key", keyPath, logPath)
		return out + errOut, code
	}
	if out, code := verify(); code != 0 {
		t.Fatalf("audit verify -checkpoints: exit %d, want 0:\n%s", code, out)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	if err := os.WriteFile(logPath, bytes.Join(lines[:len(lines)-3], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := verify(); code != 1 {
		t.Errorf("audit verify -checkpoints after deleting the last 3 lines: exit %d, want 1:\n%s", code, out)
	}
}
