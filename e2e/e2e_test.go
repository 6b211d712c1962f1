// Package e2e runs the built robotsproxy binary against origins that serve
// real robots.txt files, with real clients (Go's net/http, curl, Python's
// urllib), and checks every decision against the robots package run
// in-process.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/robots"
)

// binary is the robotsproxy executable TestMain builds with buildFlags.
var (
	binary     string
	buildFlags []string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "robotsproxy-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "robotsproxy")
	// serve keeps the CA it intercepts with in the default data directory
	// ($XDG_STATE_HOME/robotsproxy): a temporary one, never the user's
	// real ~/.local/state. The processes of the suite share it.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", binary, ".")...)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// corpusDir returns the real-world corpus (robots/ and agents/ folders):
// the larger one at $ROBOTSPROXY_CORPUS, or the repository's testdata.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ROBOTSPROXY_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "robots")); err != nil {
		t.Fatalf("no corpus at %s (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it): %v", dir, err)
	}
	return dir
}

// robotsFile is one corpus robots.txt file.
type robotsFile struct {
	name string
	body []byte
}

// pickRobotsFiles picks about n files from <corpus>/robots
// deterministically: names spread evenly over the sorted list (all of them
// when there are at most n), so that sizes and styles vary, plus the
// largest file (past the 512 KiB parse limit) and the first file over
// 100 KiB and the first with CRLF line ends if the picks lack them.
func pickRobotsFiles(t *testing.T, corpus string, n int) []robotsFile {
	t.Helper()
	dir := filepath.Join(corpus, "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".txt") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	step := max(1, len(names)/n)
	read := func(name string) robotsFile {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return robotsFile{name: name, body: body}
	}
	var files []robotsFile
	picked := map[string]bool{}
	add := func(f robotsFile) {
		if !picked[f.name] {
			picked[f.name] = true
			files = append(files, f)
		}
	}
	for i := 0; i < len(names); i += step {
		add(read(names[i]))
	}
	isBig := func(f robotsFile) bool { return len(f.body) > 100<<10 }
	isCRLF := func(f robotsFile) bool { return bytes.Contains(f.body, []byte("\r\n")) }
	largest := robotsFile{}
	var firstBig, firstCRLF *robotsFile
	for _, name := range names {
		f := read(name)
		if len(f.body) > len(largest.body) {
			largest = f
		}
		if firstBig == nil && isBig(f) && len(f.body) <= robots.DefaultMaxBytes {
			firstBig = &f
		}
		if firstCRLF == nil && isCRLF(f) {
			firstCRLF = &f
		}
	}
	add(largest)
	if !slices.ContainsFunc(files, func(f robotsFile) bool { return isBig(f) && len(f.body) <= robots.DefaultMaxBytes }) && firstBig != nil {
		add(*firstBig)
	}
	if !slices.ContainsFunc(files, isCRLF) && firstCRLF != nil {
		add(*firstCRLF)
	}
	if !slices.ContainsFunc(files, isBig) || !slices.ContainsFunc(files, isCRLF) {
		t.Fatalf("corpus %s: picked %d files, want one over 100 KiB and one with CRLF line ends among them", dir, len(files))
	}
	return files
}

// crawlerKeywords name well-known crawlers; the first instance in
// crawler-user-agents.json that contains one is its User-Agent header.
var crawlerKeywords = []string{"Googlebot/", "bingbot/", "GPTBot", "AhrefsBot", "YandexBot", "Applebot/"}

// pickAgents returns real User-Agent headers of well-known crawlers from
// the corpus, plus "" (no User-Agent header).
func pickAgents(t *testing.T, corpus string) []string {
	t.Helper()
	path := filepath.Join(corpus, "agents", "crawler-user-agents", "crawler-user-agents.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Instances []string `json:"instances"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var agents []string
	for _, kw := range crawlerKeywords {
	search:
		for _, e := range entries {
			for _, ua := range e.Instances {
				if strings.Contains(ua, kw) {
					agents = append(agents, ua)
					break search
				}
			}
		}
	}
	if len(agents) < 5 {
		t.Fatalf("%s: found %d of the crawlers %q, want at least 5", path, len(agents), crawlerKeywords)
	}
	return append(agents, "")
}

// rulePaths derives request paths from a robots.txt body: the literal
// prefix (up to the first "*" or "$") of up to nDisallow Disallow and
// nAllow Allow rules spread over the file, plus "/" and "/robots.txt".
// Rules past the parse limit count too, so that big files also yield paths
// whose rules the proxy must ignore (RFC 9309 2.5). Prefixes that clients
// would not send unchanged are percent-encoded with robots.NormalizePath,
// or dropped.
func rulePaths(body []byte, nDisallow, nAllow int) []string {
	all := robots.Options{MaxBytes: len(body) + 1}.Parse(body)
	var allow, disallow []robots.Rule
	for _, g := range all.Groups() {
		for _, r := range g.Rules {
			if r.Allow {
				allow = append(allow, r)
			} else {
				disallow = append(disallow, r)
			}
		}
	}
	paths := []string{"/", "/robots.txt"}
	pick := func(rules []robots.Rule, n int) {
		if n == 0 || len(rules) == 0 {
			return
		}
		stride := max(1, len(rules)/n)
		for i, got := 0, 0; i < len(rules) && got < n; i += stride {
			p := literalPrefix(rules[i].Text())
			if !sendable(p) {
				p = robots.NormalizePath(p)
			}
			if sendable(p) && !slices.Contains(paths, p) {
				paths = append(paths, p)
				got++
			}
		}
	}
	pick(disallow, nDisallow)
	pick(allow, nAllow)
	return paths
}

// literalPrefix returns the value of a rule line ("Disallow: /a/*.pdf")
// up to its first "*" or "$" ("/a/").
func literalPrefix(text string) string {
	_, value, ok := strings.Cut(text, ":")
	if !ok {
		_, value, _ = strings.Cut(text, " ")
	}
	value = strings.TrimSpace(value)
	if i := strings.IndexAny(value, "*$"); i >= 0 {
		value = value[:i]
	}
	return value
}

// sendable reports whether every client sends p (path and query) octet for
// octet, and the proxy forwards it so: printable ASCII without the octets
// that clients escape or glob, with valid percent-escapes only.
func sendable(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= ' ' || c >= 0x7F || strings.IndexByte("\"<>\\^`{|}[]#", c) >= 0:
			return false
		case c == '%':
			if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
				return false
			}
		}
	}
	u, err := url.Parse("http://h" + p)
	return err == nil && u.RequestURI() == p
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// expectation is what the proxy must do with one request, computed
// in-process with the policy and robots packages.
type expectation struct {
	allowed bool
	reason  string
	token   string
	rule    *robots.Rule
}

func expect(r *robots.Robots, id identity.Identity, path string) expectation {
	v := r.Test(path, id.Candidates...)
	e := expectation{allowed: v.Allowed, token: id.Token}
	if v.Matched() {
		e.rule = &v.Rule
	}
	switch {
	case v.Implicit:
		e.reason = string(auditlog.ReasonImplicit)
	case e.rule == nil:
		e.reason = string(auditlog.ReasonNoMatch)
	default:
		e.reason = string(auditlog.ReasonRule)
	}
	return e
}

// sameAs reports whether e and o decide alike, by the same rule line.
func (e expectation) sameAs(o expectation) bool {
	line := func(r *robots.Rule) int {
		if r == nil {
			return 0
		}
		return r.Line
	}
	return e.allowed == o.allowed && e.reason == o.reason && line(e.rule) == line(o.rule)
}

func (e expectation) decision() string {
	if e.allowed {
		return "allow"
	}
	return "deny"
}

func (e expectation) status() int {
	if e.allowed {
		return http.StatusOK
	}
	return http.StatusForbidden
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
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

func (b *syncBuffer) lines() []string {
	s := strings.TrimSuffix(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// proxyProcess is a running "robotsproxy serve".
type proxyProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	exited         chan struct{}
	proxyAddr      string
	adminAddr      string
}

// startProxy runs serve with the configuration text on ephemeral loopback
// ports and waits for both "listening" lines on stderr.
func startProxy(t *testing.T, config string) *proxyProcess {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServe(t, "", "-config", cfg)
}

// startServe runs "robotsproxy serve ARGS -listen 127.0.0.1:0 -admin-listen
// 127.0.0.1:0 -allow-private" in dir ("" for the current directory) and
// waits for both "listening" lines on stderr.
func startServe(t *testing.T, dir string, args ...string) *proxyProcess {
	t.Helper()
	return startServeIn(t, dir, nil, args...)
}

// startServeIn is startServe with extra environment variables for the
// proxy process only (later values win over inherited ones).
func startServeIn(t *testing.T, dir string, env []string, args ...string) *proxyProcess {
	t.Helper()
	return startBinary(t, dir, env, append(append([]string{"serve"}, args...), "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0", "-allow-private")...)
}

// startBinary runs the binary with exactly args (a serve command line),
// as startServeIn describes.
func startBinary(t *testing.T, dir string, env []string, args ...string) *proxyProcess {
	t.Helper()
	p := &proxyProcess{stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Dir = dir
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		// A binary built with -race exits 66 on a data race; SIGKILL
		// above hides that, so report what the detector printed.
		if strings.Contains(p.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("robotsproxy serve reported a data race:\n%s", p.stderr)
		}
	})
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for p.proxyAddr == "" || p.adminAddr == "" {
		select {
		case <-p.exited:
			t.Fatalf("robotsproxy serve exited before listening (%v); stderr:\n%s", p.cmd.ProcessState, p.stderr)
		case <-deadline:
			t.Fatalf("robotsproxy serve: no \"listening\" lines for proxy and admin within 30s; stderr:\n%s", p.stderr)
		case <-tick.C:
		}
		for _, line := range p.stderr.lines() {
			var l struct{ Message, Listener, Addr string }
			if json.Unmarshal([]byte(line), &l) != nil || l.Message != "listening" {
				continue
			}
			switch l.Listener {
			case "proxy":
				p.proxyAddr = l.Addr
			case "admin":
				p.adminAddr = l.Addr
			}
		}
	}
	return p
}

// stop sends SIGTERM and checks that serve shuts down with exit code 0.
func (p *proxyProcess) stop(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGTERM)
	p.wait(t, "SIGTERM")
}

func (p *proxyProcess) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits for serve to exit after what and checks the exit code is 0.
func (p *proxyProcess) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("robotsproxy serve still running 30s after %s; stderr:\n%s", what, p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("robotsproxy serve after %s: got exit code %d, want 0; stderr:\n%s", what, code, p.stderr)
	}
}

// auditLines waits until stdout holds at least n audit lines (they are
// written just after each response) and returns them decoded.
func (p *proxyProcess) auditLines(t *testing.T, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(p.stdout.lines()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var out []map[string]any
	for i, line := range p.stdout.lines() {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %d is not JSON (%v): %q", i+1, err, line)
		}
		out = append(out, m)
	}
	if len(out) < n {
		t.Fatalf("audit log: got %d lines, want at least %d", len(out), n)
	}
	return out
}

// origin serves one corpus robots.txt file at /robots.txt and
// "origin:<path>" everywhere else, counting requests.
type origin struct {
	file robotsFile
	srv  *httptest.Server
	host string // 127.0.0.1:port

	mu            sync.Mutex
	hits          map[string]int // request target -> requests, robots.txt fetches by the proxy excepted
	robotsFetches int            // GET /robots.txt by the proxy (User-Agent robotsproxy/...)
}

func newOrigin(t *testing.T, f robotsFile) *origin {
	o := &origin{file: f, hits: map[string]int{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		if r.RequestURI == "/robots.txt" && strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
			o.robotsFetches++
		} else {
			o.hits[r.RequestURI]++
		}
		o.mu.Unlock()
		if r.RequestURI == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(f.body)
			return
		}
		_, _ = io.WriteString(w, "origin:"+r.RequestURI)
	}))
	t.Cleanup(o.srv.Close)
	o.host = strings.TrimPrefix(o.srv.URL, "http://")
	return o
}

// body is what the origin answers for path.
func (o *origin) body(path string) []byte {
	if path == "/robots.txt" {
		return o.file.body
	}
	return []byte("origin:" + path)
}

// reqCase is one request and its expected outcome.
type reqCase struct {
	origin *origin
	ua     string
	path   string
	want   expectation
}

func (c reqCase) url() string { return "http://" + c.origin.host + c.path }

// result is what a client saw.
type result struct {
	status int
	header http.Header // Go client only
	body   []byte      // Go client only
	sum    string      // sha256 of the body, Python only
	err    error
}

// failures reports the first few problems of a run in full and counts the
// rest, so that a systematic bug does not print thousands of lines.
type failures struct {
	t  *testing.T
	mu sync.Mutex
	n  int
}

const maxReported = 40

func (f *failures) errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n <= maxReported {
		f.t.Errorf(format, args...)
	}
}

func (f *failures) done() {
	if f.n > maxReported {
		f.t.Errorf("... and %d more failures", f.n-maxReported)
	}
}

// TestProxyCorpus runs the built proxy against origins serving real
// robots.txt files and checks each decision, the 403 responses, the origin
// hits, the audit log and the metrics.
func TestProxyCorpus(t *testing.T) {
	corpus := corpusDir(t)
	files := pickRobotsFiles(t, corpus, 30)
	agents := pickAgents(t, corpus)
	ident := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)

	var cases []reqCase
	var origins []*origin
	nPaths, pastLimit := 0, 0
	for _, f := range files {
		o := newOrigin(t, f)
		origins = append(origins, o)
		parsed := robots.Parse(f.body)
		whole := robots.Options{MaxBytes: len(f.body) + 1}.Parse(f.body)
		paths := rulePaths(f.body, 4, 3)
		nPaths += len(paths)
		for _, ua := range agents {
			id := ident.Identify(ua)
			for _, p := range paths {
				c := reqCase{origin: o, ua: ua, path: p, want: expect(parsed, id, p)}
				cases = append(cases, c)
				if !c.want.sameAs(expect(whole, id, p)) {
					pastLimit++
				}
			}
		}
	}
	// The largest file is over the 512 KiB parse limit: some decisions
	// must depend on ignoring its tail (RFC 9309 2.5).
	if pastLimit == 0 {
		t.Fatalf("no request's decision depends on the parse limit; want some from the largest corpus file")
	}

	p := startProxy(t, "shutdown_timeout: 10s\n")
	proxyURL := &url.URL{Scheme: "http", Host: p.proxyAddr}
	fail := &failures{t: t}
	defer fail.done()

	// curl drops an empty query ("/works?" goes out as "/works"), so
	// those paths are left to the Go client.
	plainQuery := func(c reqCase) bool { return !strings.HasSuffix(c.path, "?") }
	type phase struct {
		client string // also the program it needs on PATH, except "go"
		cases  []reqCase
		do     func(*testing.T, []reqCase) []result
	}
	phases := []phase{
		{"go", cases, func(_ *testing.T, cs []reqCase) []result { return goClient(proxyURL, cs) }},
		{"curl", every(cases, max(1, len(cases)/60), 0, plainQuery), func(_ *testing.T, cs []reqCase) []result { return curlClient(p.proxyAddr, cs) }},
		{"python3", every(cases, max(1, len(cases)/40), 7, plainQuery), func(t *testing.T, cs []reqCase) []result { return pythonClient(t, p.proxyAddr, cs) }},
	}
	if n1, n2 := len(phases[1].cases), len(phases[2].cases); n1 < 50 || n2 < 30 {
		t.Fatalf("picked %d curl and %d Python requests, want at least 50 and 30", n1, n2)
	}

	// Each client runs in turn; after each, the audit log must have grown
	// by exactly its requests, with the expected fields.
	var ran []phase
	audited := 0
	for _, ph := range phases {
		completed := false
		t.Run(ph.client, func(t *testing.T) {
			if ph.client != "go" {
				if _, err := exec.LookPath(ph.client); err != nil {
					t.Skipf("SKIPPED: %s not installed (CI installs it)", ph.client)
				}
			}
			fail := &failures{t: t}
			defer fail.done()
			res := ph.do(t, ph.cases)
			for i, c := range ph.cases {
				checkResponse(fail, ph.client, c, res[i])
			}
			lines := p.auditLines(t, audited+len(ph.cases))
			checkAudit(fail, ph.client, ph.cases, lines[audited:])
			audited += len(ph.cases)
			ran = append(ran, ph)
			completed = true
		})
		if !completed && t.Failed() {
			t.Fatalf("the %s client did not finish; the checks that follow would only add noise", ph.client)
		}
	}

	// The origins: a denied request never reaches them, an allowed one
	// does exactly once, and each robots.txt was fetched once.
	wantHits := map[*origin]map[string]int{}
	for _, o := range origins {
		wantHits[o] = map[string]int{}
	}
	for _, ph := range ran {
		for _, c := range ph.cases {
			if c.want.allowed {
				wantHits[c.origin][c.path]++
			} else {
				wantHits[c.origin][c.path] += 0 // listed: it must get no hits
			}
		}
	}
	for _, o := range origins {
		o.mu.Lock()
		for path, want := range wantHits[o] {
			if got := o.hits[path]; got != want {
				fail.errorf("origin %s (%s) path %q: got %d hits, want %d (one per allowed request; a denied request must not reach the origin)", o.host, o.file.name, path, got, want)
			}
		}
		for path, got := range o.hits {
			if _, ok := wantHits[o][path]; !ok {
				fail.errorf("origin %s (%s): got %d hits on %q, which no client requested", o.host, o.file.name, got, path)
			}
		}
		if o.robotsFetches != 1 {
			fail.errorf("origin %s (%s): proxy fetched /robots.txt %d times, want exactly 1", o.host, o.file.name, o.robotsFetches)
		}
		o.mu.Unlock()
	}

	// Admin listener.
	want := map[string]int{} // "decision/reason" -> requests
	for _, ph := range ran {
		for _, c := range ph.cases {
			want[c.want.decision()+"/"+c.want.reason]++
		}
	}
	checkAdmin(t, p.adminAddr, want, len(origins))

	p.stop(t)
	if got := len(p.stdout.lines()); got != audited {
		t.Errorf("audit log after shutdown: got %d lines, want %d (one per request)", got, audited)
	}

	// Summary.
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "client\tdecision\treason\trequests\t\n")
	for _, ph := range ran {
		counts := map[string]int{}
		for _, c := range ph.cases {
			counts[c.want.decision()+"\t"+c.want.reason]++
		}
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%d\t\n", ph.client, k, counts[k])
		}
	}
	tw.Flush()
	var perClient []string
	for _, ph := range ran {
		perClient = append(perClient, fmt.Sprintf("%s %d", ph.client, len(ph.cases)))
	}
	t.Logf("%d robots.txt files, %d agents (%d crawlers + no User-Agent), %d paths, %d requests (%s); %d Go requests decided differently had the tail past 512 KiB been parsed\n%s",
		len(files), len(agents), len(agents)-1, nPaths, audited, strings.Join(perClient, ", "), pastLimit, sb.String())
	t.Logf("sample audit lines:\n%s", sampleLines(p.auditLines(t, audited)))
}

// sampleLines picks one audit line of each kind of decision, for the log.
func sampleLines(lines []map[string]any) string {
	kinds := []func(m map[string]any) bool{
		func(m map[string]any) bool { return m["decision"] == "deny" && m["star_fallback"] == false },
		func(m map[string]any) bool { return m["decision"] == "deny" && m["star_fallback"] == true },
		func(m map[string]any) bool { return m["decision"] == "allow" && m["reason"] == "rule" },
		func(m map[string]any) bool { return m["reason"] == "no-matching-rule" },
		func(m map[string]any) bool { return m["reason"] == "implicit-robots-txt" },
	}
	var out strings.Builder
	for _, match := range kinds {
		for _, m := range lines {
			if match(m) {
				b, _ := json.Marshal(m)
				out.Write(b)
				out.WriteByte('\n')
				break
			}
		}
	}
	return out.String()
}

// every returns every k-th case starting at offset, skipping those keep
// rejects.
func every(cases []reqCase, k, offset int, keep func(reqCase) bool) []reqCase {
	var out []reqCase
	for i := offset % k; i < len(cases); i += k {
		if keep(cases[i]) {
			out = append(out, cases[i])
		}
	}
	return out
}

// goClient sends the cases through the proxy with net/http, several at a
// time so that first requests to an origin race for its robots.txt.
func goClient(proxy *url.URL, cases []reqCase) []result {
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), MaxIdleConnsPerHost: 16, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	res := make([]result, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				res[i] = goRequest(client, cases[i])
			}
		})
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	return res
}

func goRequest(client *http.Client, c reqCase) result {
	req, err := http.NewRequest(http.MethodGet, c.url(), nil)
	if err != nil {
		return result{err: err}
	}
	// An empty value makes net/http send no User-Agent header at all.
	req.Header["User-Agent"] = []string{c.ua}
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

// clientEnv is the environment for curl and Python: no proxy settings
// from outside, and no hosts exempted from the proxy.
func clientEnv(proxy string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "request_method":
			continue
		}
		env = append(env, kv)
	}
	if proxy != "" {
		env = append(env, "HTTP_PROXY="+proxy, "http_proxy="+proxy)
	}
	return append(env, "NO_PROXY=", "no_proxy=")
}

func curlClient(proxyAddr string, cases []reqCase) []result {
	res := make([]result, len(cases))
	for i, c := range cases {
		// -g: no URL globbing; --path-as-is: keep "/./" and "/../".
		// -A "" sends no User-Agent header.
		cmd := exec.Command("curl", "-s", "-g", "--path-as-is", "-o", "/dev/null", "-w", "%{http_code}",
			"-x", "http://"+proxyAddr, "-A", c.ua, c.url())
		cmd.Env = clientEnv("")
		out, err := cmd.Output()
		if err != nil {
			res[i] = result{err: fmt.Errorf("curl %s: %w", c.url(), err)}
			continue
		}
		code, err := strconv.Atoi(strings.TrimSpace(string(out)))
		res[i] = result{status: code, err: err}
	}
	return res
}

// pythonScript reads "URL<TAB>User-Agent" lines and prints "status<TAB>
// sha256(body)" for each, fetching through the proxy that urllib finds in
// HTTP_PROXY.
const pythonScript = `
import hashlib, sys, urllib.error, urllib.request
opener = urllib.request.build_opener()
for line in sys.stdin:
    url, ua = line.rstrip("\n").split("\t", 1)
    req = urllib.request.Request(url, headers={"User-Agent": ua})
    try:
        with opener.open(req, timeout=60) as r:
            code, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, body = e.code, e.read()
    except Exception as e:
        code, body = 0, repr(e).encode()
        print(repr(e), file=sys.stderr)
    print(code, hashlib.sha256(body).hexdigest(), sep="\t", flush=True)
`

func pythonClient(t *testing.T, proxyAddr string, cases []reqCase) []result {
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%s\t%s\n", c.url(), c.ua)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", pythonScript)
	cmd.Env = clientEnv("http://" + proxyAddr)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	res := make([]result, len(cases))
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := range res {
		if !sc.Scan() {
			res[i] = result{err: errors.New("python3 printed no line for this request")}
			continue
		}
		code, sum, _ := strings.Cut(sc.Text(), "\t")
		n, err := strconv.Atoi(code)
		res[i] = result{status: n, sum: sum, err: err}
	}
	return res
}

// checkResponse compares what a client saw with the expectation.
func checkResponse(fail *failures, client string, c reqCase, r result) {
	in := fmt.Sprintf("%s: GET %s (%s) User-Agent %q", client, c.url(), c.origin.file.name, c.ua)
	if r.err != nil {
		fail.errorf("%s: %v", in, r.err)
		return
	}
	if r.status != c.want.status() {
		fail.errorf("%s: got status %d, want %d (%s, rule %s)", in, r.status, c.want.status(), c.want.reason, ruleText(c.want.rule))
		return
	}
	if r.sum != "" && c.want.allowed {
		sum := sha256.Sum256(c.origin.body(c.path))
		if want := hex.EncodeToString(sum[:]); r.sum != want {
			fail.errorf("%s: got a body with sha256 %s, want the origin's (%s)", in, r.sum, want)
		}
	}
	if r.header == nil {
		return
	}
	if c.want.allowed {
		if want := c.origin.body(c.path); !bytes.Equal(r.body, want) {
			fail.errorf("%s: got body %.80q, want the origin's %.80q", in, r.body, want)
		}
		if got := r.header.Get("X-Robotsproxy-Decision"); got != "" {
			fail.errorf("%s: allowed response carries X-Robotsproxy-Decision %q, want none", in, got)
		}
		return
	}
	wantHeaders := map[string]string{
		"X-Robotsproxy-Decision":      "deny",
		"X-Robotsproxy-Reason":        c.want.reason,
		"X-Robotsproxy-Robots-Url":    "http://" + c.origin.host + "/robots.txt",
		"X-Robotsproxy-Product-Token": c.want.token,
	}
	for k, want := range wantHeaders {
		if got := r.header.Get(k); got != want {
			fail.errorf("%s: 403 header %s: got %q, want %q", in, k, got, want)
		}
	}
	if got, want := r.header.Get("X-Robotsproxy-Rule"), fmt.Sprintf("line %d: ", c.want.rule.Line); !strings.HasPrefix(got, want) {
		fail.errorf("%s: 403 header X-Robotsproxy-Rule: got %q, want it to start with %q (%s)", in, got, want, c.want.rule.Text())
	}
	if !bytes.HasPrefix(r.body, []byte("robotsproxy: ")) {
		fail.errorf("%s: 403 body %q, want robotsproxy's explanation", in, r.body)
	}
}

func ruleText(r *robots.Rule) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("line %d %q", r.Line, r.Text())
}

// checkAudit matches audit lines to the cases of one client: the same
// number of lines per URL and User-Agent, each with the expected fields.
func checkAudit(fail *failures, client string, cases []reqCase, lines []map[string]any) {
	type key struct{ url, ua string }
	want := map[key][]reqCase{}
	for _, c := range cases {
		k := key{c.url(), c.ua}
		want[k] = append(want[k], c)
	}
	for _, l := range lines {
		u, _ := l["url"].(string)
		ua, _ := l["user_agent"].(string)
		k := key{u, ua}
		cs := want[k]
		if len(cs) == 0 {
			fail.errorf("%s: audit line for no request of this client (or one too many): %v", client, l)
			continue
		}
		c := cs[0]
		want[k] = cs[1:]
		fields := map[string]any{
			"method":        "GET",
			"decision":      c.want.decision(),
			"reason":        c.want.reason,
			"product_token": c.want.token,
			"status":        float64(c.want.status()),
			"robots_url":    "http://" + c.origin.host + "/robots.txt",
		}
		if c.want.rule != nil {
			fields["rule_line"] = float64(c.want.rule.Line)
		}
		for f, w := range fields {
			if got := l[f]; got != w {
				fail.errorf("%s: audit line for GET %s User-Agent %q: field %s: got %v, want %v", client, u, ua, f, got, w)
			}
		}
		if c.want.rule == nil && l["rule_line"] != nil {
			fail.errorf("%s: audit line for GET %s User-Agent %q: got rule_line %v, want none", client, u, ua, l["rule_line"])
		}
	}
	for k, cs := range want {
		if len(cs) > 0 {
			fail.errorf("%s: GET %s User-Agent %q: %d requests have no audit line (did they bypass the proxy?)", client, k.url, k.ua, len(cs))
		}
	}
}

// checkAdmin checks /healthz and the request and fetch counters of
// /metrics.
func checkAdmin(t *testing.T, addr string, requests map[string]int, fetches int) {
	t.Helper()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: got %d %q, want 200", code, body)
	}
	code, body := get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: got %d, want 200", code)
	}
	got := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if name, value, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "robotsproxy_") {
			got[name] = value
		}
	}
	for dr, n := range requests {
		d, r, _ := strings.Cut(dr, "/")
		name := fmt.Sprintf("robotsproxy_requests_total{decision=%q,enforced=\"true\",reason=%q}", d, r)
		if got[name] != strconv.Itoa(n) {
			t.Errorf("GET /metrics: %s: got %q, want %d", name, got[name], n)
		}
	}
	name := `robotsproxy_robots_fetches_total{result="successful"}`
	if got[name] != strconv.Itoa(fetches) {
		t.Errorf("GET /metrics: %s: got %q, want %d (one per origin)", name, got[name], fetches)
	}
	for _, other := range []string{"unavailable", "unreachable"} {
		name := fmt.Sprintf("robotsproxy_robots_fetches_total{result=%q}", other)
		if v, ok := got[name]; ok && v != "0" {
			t.Errorf("GET /metrics: %s: got %q, want 0", name, v)
		}
	}
}

// TestServeGracefulShutdown signals serve while a request is in flight: the
// request must complete, its audit line be written, and serve exit 0.
func TestServeGracefulShutdown(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			arrived, release := make(chan struct{}), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
					return
				}
				close(arrived)
				<-release
				_, _ = io.WriteString(w, "done")
			}))
			defer srv.Close()
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()

			p := startProxy(t, "shutdown_timeout: 30s\n")
			client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.proxyAddr})}}
			got := make(chan result, 1)
			go func() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/slow", nil)
				req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; ExampleBot/1.0)")
				resp, err := client.Do(req)
				if err != nil {
					got <- result{err: err}
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				got <- result{status: resp.StatusCode, body: body, err: err}
			}()
			select {
			case <-arrived:
			case r := <-got:
				t.Fatalf("GET /slow via the proxy ended before reaching the origin: %+v", r)
			case <-time.After(30 * time.Second):
				t.Fatal("GET /slow via the proxy did not reach the origin within 30s")
			}

			p.signal(t, sig)
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(p.stderr.String(), `"shutting down"`) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(p.stderr.String(), `"shutting down"`) {
				t.Fatalf("after %v: no \"shutting down\" line on stderr:\n%s", sig, p.stderr)
			}
			select {
			case <-p.exited:
				t.Fatalf("after %v: serve exited with a request in flight; stderr:\n%s", sig, p.stderr)
			default:
			}
			close(release)

			r := <-got
			if r.err != nil || r.status != http.StatusOK || string(r.body) != "done" {
				t.Errorf("in-flight GET /slow across %v: got status %d body %q error %v, want 200 \"done\"", sig, r.status, r.body, r.err)
			}
			p.wait(t, sig.String())
			lines := p.auditLines(t, 1)
			if len(lines) != 1 || lines[0]["status"] != float64(200) || lines[0]["url"] != srv.URL+"/slow" {
				t.Errorf("audit log after %v: got %v, want one line for GET %s/slow with status 200", sig, lines, srv.URL)
			}
		})
	}
}

// TestServeWithoutConfigFile starts serve in a directory without
// config.yaml: the built-in defaults apply.
func TestServeWithoutConfigFile(t *testing.T) {
	p := startServe(t, t.TempDir())
	if !strings.Contains(p.stderr.String(), "no configuration file") {
		t.Errorf("serve without ./config.yaml: got stderr %q, want a note that the built-in defaults are used", p.stderr)
	}
	p.stop(t)
}
