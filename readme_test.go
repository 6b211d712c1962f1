package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shBlock returns the first ```sh block of text.
func shBlock(text string) (string, error) {
	_, block, ok := strings.Cut(text, "\n```sh\n")
	if !ok {
		return "", errors.New("no ```sh block")
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		return "", errors.New("the ```sh block is not closed")
	}
	return block, nil
}

// quickStartBlock returns the first ```sh block under "## Quick start" in
// readme.
func quickStartBlock(readme string) (string, error) {
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return "", fmt.Errorf(`no "## Quick start" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	block, err := shBlock(section)
	if err != nil {
		return "", fmt.Errorf("the Quick start: %w", err)
	}
	return block, nil
}

// expectedOutput returns what a block says its commands print: the "# "
// comment lines right under a command line, without the "# ", in order;
// and how many commands have such lines.
func expectedOutput(block string) (out string, commands int) {
	var b strings.Builder
	prevCommand, counted := false, false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			prevCommand = false
		case strings.HasPrefix(line, "#"):
			if prevCommand {
				b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ") + "\n")
				if !counted {
					commands, counted = commands+1, true
				}
			}
		default:
			prevCommand, counted = true, false
		}
	}
	return b.String(), commands
}

// normalizeOutput joins lines with single spaces for each run of white
// space, so that a tab in the output matches the README's tab or spaces.
func normalizeOutput(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// requirePortsFree skips the test when one of the default ports the
// README's commands use is taken on 127.0.0.1: they are run as written,
// on those ports, and another program's answers must not be taken for
// theirs.
func requirePortsFree(t *testing.T, ports ...string) {
	t.Helper()
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Skipf("SKIPPED: the README's commands use 127.0.0.1:%s as written, and it is in use here: %v", p, err)
		}
		l.Close()
	}
}

// waitPortsFree waits up to d until nothing listens on the ports.
func waitPortsFree(t *testing.T, d time.Duration, ports ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, p := range ports {
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Errorf("something still listens on 127.0.0.1:%s %v after the README's commands stopped what they started", p, d)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// userEnv is the environment of the README's commands: this one, with
// HOME and XDG_STATE_HOME in fresh temporary directories (serve keeps its
// interception CA under $XDG_STATE_HOME/robotsproxy), and the Go
// configuration, build and module caches pinned to this user's (a new
// HOME would move them), as a user who clones the repository has them.
func userEnv(t *testing.T) []string {
	t.Helper()
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOENV", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			goEnvErr = err
			return
		}
		for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			goEnv = append(goEnv, []string{"GOENV", "GOCACHE", "GOMODCACHE", "GOPATH"}[i]+"="+v)
		}
	})
	if goEnvErr != nil {
		t.Fatalf("go env: %v", goEnvErr)
	}
	env := append(os.Environ(), "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	return append(env, goEnv...)
}

var (
	goEnvOnce sync.Once
	goEnv     []string
	goEnvErr  error
)

// startGroup starts cmd in its own process group, and kills the group
// when the test ends, so that nothing a README command started in the
// background outlives the test.
func startGroup(t *testing.T, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	return exited
}

// TestReadmeQuickStart runs the README's Quick start block as one bash
// script, exactly as written, in a copy of the repository (repoCopy) as a
// user pastes it into a fresh clone, with a fresh HOME: on the default
// ports, which must be free. Its standard output must be what the block's
// comment lines say, the audit log must hold one line per request, and
// the block must stop what it started.
func TestReadmeQuickStart(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the README's Quick start needs %s on PATH (CI installs it)", tool)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, err := quickStartBlock(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	want, checked := expectedOutput(block)
	if checked < 4 {
		t.Errorf("the Quick start states the output of %d commands, want at least 4: it lost its expected outputs", checked)
	}
	requirePortsFree(t, "8080", "9090", "8001")
	dir := repoCopy(t)
	script := filepath.Join(t.TempDir(), "quickstart.sh")
	if err := os.WriteFile(script, []byte(block+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir, cmd.Env = dir, userEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startGroup(t, cmd)
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the Quick start block exited %d (%v)", code, cmd.ProcessState)
	}
	if got := normalizeOutput(stdout.String()); got != normalizeOutput(want) {
		t.Errorf("the Quick start block printed:\n%s\nthe README says:\n%s\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
	waitPortsFree(t, 10*time.Second, "8080", "9090", "8001")
	lines := readAuditLog(t, filepath.Join(dir, "audit.log"))
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprint(l["decision"], " ", l["reason"], " ", l["url"]))
	}
	if len(got) != 3 || got[0] != "allow no-matching-rule http://127.0.0.1:8001/index.html" || !strings.HasPrefix(got[1], "deny rule ") || !strings.HasPrefix(got[2], "deny rule ") {
		t.Errorf("audit.log: got %q, want the allowed index.html and two rule denials", got)
	}
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(dir, "robotsproxy.log"))
		t.Logf("robotsproxy.log:\n%s", log)
	}
}

// readAuditLog reads the audit lines of an audit log (JSON lines),
// skipping the proxy's own "level" lines.
func readAuditLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("audit log: %v", err)
		return nil
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Errorf("%s: %q: %v", path, sc.Text(), err)
			continue
		}
		if _, op := l["level"]; !op {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestReadmeFirstCommand runs the README's first command, "go run .
// serve", exactly as written, in a copy of the repository (a fresh clone,
// config.yaml and all) with a fresh HOME, on its default ports, which must
// be free: the admin listener answers /healthz and lists its endpoints;
// one request through the proxy is answered by the proxy (403
// destination-refused: the defaults refuse loopback destinations, and the
// origin never sees it) and audited; then SIGTERM to the serve process
// stops it and "go run" exits 0 within 15 s. The second command, "go test
// ./...", is what CI runs; this test checks it is still written so.
func TestReadmeFirstCommand(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	top, err := shBlock(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var commands []string
	for _, line := range strings.Split(top, "\n") {
		c, _, _ := strings.Cut(line, "#")
		if c = strings.TrimSpace(c); c != "" {
			commands = append(commands, c)
		}
	}
	if len(commands) != 2 || !strings.HasSuffix(commands[0], " serve") || commands[1] != "go test ./..." {
		t.Fatalf("the README's top block is %q, want a serve command and \"go test ./...\": update this test with it", commands)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("SKIPPED: needs bash on PATH")
	}
	requirePortsFree(t, "8080", "9090")
	var hits atomicCounter
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.add() }))
	defer origin.Close()

	cmd := exec.Command("bash", "-c", commands[0])
	cmd.Dir, cmd.Env = repoCopy(t), userEnv(t)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startGroup(t, cmd)
	healthz := waitHTTP(t, "http://127.0.0.1:9090/healthz", 6*time.Minute, exited, &stderr)
	if healthz != "ok\n" {
		t.Errorf("/healthz: %q, want \"ok\\n\"", healthz)
	}
	if index := waitHTTP(t, "http://127.0.0.1:9090/", time.Minute, exited, &stderr); !strings.Contains(index, "/readyz") || !strings.Contains(index, "/metrics") {
		t.Errorf("the admin listener's /: %q, want its endpoints", index)
	}

	proxy, _ := url.Parse("http://127.0.0.1:8080")
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, origin.URL+"/page", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a request through the proxy on 127.0.0.1:8080: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("X-Robotsproxy-Reason") != "destination-refused" || hits.get() != 0 {
		t.Errorf("a request to a loopback origin through the defaults: %s, reason %q, %d requests at the origin; want 403 destination-refused and none: %s",
			resp.Status, resp.Header.Get("X-Robotsproxy-Reason"), hits.get(), body)
	}
	waitFor(t, &stdout, `"reason":"destination-refused"`, exited)

	pid := serveProcess(t, cmd.Process.Pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("go run . serve still running 15s after SIGTERM to serve; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("go run . serve after SIGTERM: exit %d, want 0; stderr:\n%s", code, stderr.String())
	}
	noPanic(t, []string{"serve"}, binaryResult{stderr: stderr.String()})
}

// serveProcess returns the process id of the serve process that the
// process pid started, directly or through "go run": the descendant
// whose name is robotsproxy (Linux /proc).
func serveProcess(t *testing.T, pid int) int {
	t.Helper()
	children := map[int][]int{}
	names := map[int]string{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("SKIPPED: the serve process is found in /proc: %v", err)
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(string(stat[closing+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
		names[p] = string(stat[open+1 : closing])
	}
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		if names[queue[0]] == "robotsproxy" {
			return queue[0]
		}
		queue = append(queue, children[queue[0]]...)
	}
	t.Fatalf("no robotsproxy process under process %d", pid)
	return 0
}

// waitHTTP GETs u until it answers 200, for at most d, and returns the
// body; it fails the test when exited is closed first.
func waitHTTP(t *testing.T, u string, d time.Duration, exited <-chan struct{}, log fmt.Stringer) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(d)
	for {
		resp, err := client.Get(u)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return string(body)
			}
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		select {
		case <-exited:
			t.Fatalf("exited before %s answered (%v); stderr:\n%s", u, err, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no 200 within %v: %v; stderr:\n%s", u, d, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer is a buffer a running process writes to while the test
// reads it. The bytes.Buffer is a field, not embedded: an embedded one's
// ReadFrom, which io.Copy prefers, would bypass the lock.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// atomicCounter counts an origin's requests.
type atomicCounter struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCounter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *atomicCounter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// mdAnchors returns the GitHub anchors of a Markdown file's headings.
func mdAnchors(text string) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^\w\- ]`)
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(text, -1) {
		a := drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}

// conflictMarker matches a line git writes into a file whose merge it
// could not finish: "<<<<<<< ours", "||||||| base" (diff3), "=======" and
// ">>>>>>> theirs". A Markdown heading underline is never exactly seven
// "=" alone on a line in these pages (they use "#" headings).
var conflictMarker = regexp.MustCompile(`^(<{7}|\|{7}|>{7})( |$)|^={7}$`)

// conflictMarkers returns the numbers (from 1) of the lines of text that
// are git conflict markers, fenced code blocks included: a marker there is
// as much a failed merge as anywhere.
func conflictMarkers(text string) []int {
	var out []int
	for i, line := range strings.Split(text, "\n") {
		if conflictMarker.MatchString(strings.TrimSuffix(line, "\r")) {
			out = append(out, i+1)
		}
	}
	return out
}

// TestDocs checks the documentation as a reader meets it: README.md stays a
// front page (at most 250 lines), every relative link of README.md,
// CHANGELOG.md, testdata/README.md and docs/*.md names a file that exists
// and a heading that exists, and no page points to an issue tracker that
// is not in the repository (an issue number), and no page keeps a git
// conflict marker (conflictMarkers). The Mermaid diagrams stay true to
// the code (checkDiagrams).
func TestDocs(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("docs", "*.md"))
	if len(pages) < 12 {
		t.Errorf("docs/ has %d pages, want the 12 of the manual", len(pages))
	}
	checkDiagrams(t, append([]string{"README.md"}, pages...))
	pages = append(pages, "README.md", "CHANGELOG.md", filepath.Join("testdata", "README.md"), "config.yaml")
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	issue := regexp.MustCompile(`(?i)\bissues?( [0-9]+|'s\b)`)
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if page == "README.md" {
			if n := strings.Count(text, "\n"); n > 250 {
				t.Errorf("README.md has %d lines, want at most 250: move the detail to docs/", n)
			}
		}
		if m := issue.FindString(text); m != "" {
			t.Errorf("%s mentions %q: name the behaviour, not the tracker", page, m)
		}
		for _, n := range conflictMarkers(text) {
			t.Errorf("%s:%d is a git conflict marker: resolve the merge", page, n)
		}
		if !strings.HasSuffix(page, ".md") {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				if _, serr := os.Stat(path); serr != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
				}
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !mdAnchors(string(body))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
}

// TestConflictMarkers: the check TestDocs runs finds each kind of marker
// git writes, and not the lines that only look like one.
func TestConflictMarkers(t *testing.T) {
	text := "# Page\n<<<<<<< HEAD\nours\n||||||| base\nbase\n=======\ntheirs\n>>>>>>> h-docs\n" +
		"Heading\n========\n<<<<<<<< eight\n== a == b\n    =======\n>>>>>>>\r\n"
	if got, want := fmt.Sprint(conflictMarkers(text)), "[2 4 6 8 14]"; got != want {
		t.Errorf("conflictMarkers: lines %s, want %s", got, want)
	}
	if got := conflictMarkers("# Page\n\nNo merge left here.\n"); got != nil {
		t.Errorf("conflictMarkers of a clean page: %v, want none", got)
	}
}
