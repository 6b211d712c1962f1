package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit/report"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// auditIdent is a proxy user pinned to a product token in one mode.
type auditIdent struct {
	user, pass, token, mode string
}

// auditOrigin serves one corpus robots.txt file at /robots.txt and
// "origin:<request target>" everywhere else, on its own loopback address
// so that the report's per-host rows differ.
type auditOrigin struct {
	file     robotsFile
	path     string // the corpus file, for "robotsproxy check"
	host     string // 127.0.0.N:port
	hostname string // 127.0.0.N
	sha      string // hex SHA-256 of the body
}

// auditVerdict is what "robotsproxy check -json" says of one URL.
type auditVerdict struct {
	allowed  bool
	implicit bool
	rule     string
	line     int
}

// auditReq is one request through the proxy and what check expects of it.
type auditReq struct {
	id     *auditIdent
	o      *auditOrigin
	path   string
	client string // "go" or "curl"
	want   auditVerdict
}

func (r auditReq) url() string { return "http://" + r.o.host + r.path }

// reportOnly reports whether the proxy must forward the request although
// robots.txt disallows it.
func (r auditReq) reportOnly() bool { return !r.want.allowed && r.id.mode == "report" }

// auditResp is what a client saw.
type auditResp struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// auditUA is sent by every client: the pinned credentials must win over it.
const auditUA = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"

// TestAuditEndToEnd checks auditing end to end: one proxy with a report-mode
// and an enforce-mode identity (pinned by credentials) against origins
// serving real corpus robots.txt files. Each response, the audit log, the
// JSON report's violations and per-token counts are checked against what
// "robotsproxy check" says of the same files; then "audit verify" must
// pass on the untouched log and archive and name the right line for a
// deleted line, an edited decision and a swapped archived body.
func TestAuditEndToEnd(t *testing.T) {
	corpus := corpusDir(t)
	files := auditPickFiles(t, corpus, 3)
	idents := []*auditIdent{
		{user: "watched", pass: "watched-secret", token: "GPTBot", mode: "report"},
		{user: "strict", pass: "strict-secret", token: "Googlebot", mode: "enforce"},
	}
	var users strings.Builder
	for _, id := range idents {
		fmt.Fprintf(&users, "    - {name: %s, password_bcrypt: %q, token: %s, mode: %s}\n", id.user, hashPassword(t, id.pass), id.token, id.mode)
	}
	var origins []*auditOrigin
	for i, f := range files {
		origins = append(origins, newAuditOrigin(t, i, corpus, f))
	}
	dir := t.TempDir()
	logPath, archive := filepath.Join(dir, "audit.log"), filepath.Join(dir, "archive")
	p := startProxy(t, fmt.Sprintf("shutdown_timeout: 10s\nlog:\n  file: %q\naudit:\n  archive_dir: %q\nidentity:\n  users:\n%s",
		logPath, archive, users.String()))

	reqs := auditRequests(t, origins, idents)
	for _, id := range idents {
		if c := auditCoverage(reqs, id); c["allowed"] == 0 || c["disallowed"] == 0 {
			t.Fatalf("%s (%s): check allows %d and disallows %d of the derived URLs, want some of each", id.user, id.token, c["allowed"], c["disallowed"])
		}
	}
	fail := &failures{t: t}
	start := time.Now()
	res := sendAuditGo(p, reqs)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("SKIPPED the curl requests: curl is not installed (CI installs it)")
	} else {
		curlReqs := auditCurlSubset(reqs)
		reqs = append(reqs, curlReqs...)
		res = append(res, sendAuditCurl(t, p.proxyAddr, curlReqs)...)
	}
	for i, r := range reqs {
		checkAuditResp(fail, r, res[i])
	}
	p.stop(t)
	sent := time.Since(start)
	fail.done()
	if t.Failed() {
		t.FailNow()
	}

	lines := testkit.ReadAuditLines(t, logPath)
	checkAuditLogLines(t, reqs, lines)
	checkAuditReport(t, logPath, reqs)
	verified := checkAuditVerify(t, logPath, archive, origins, lines)
	checkAuditShow(t, archive, origins[0])
	writeAuditHTML(t, logPath)

	n := auditCounts(reqs)
	t.Logf("%d robots.txt files, %d requests (%d by curl) in %v: %s %s (report mode) %d, %d forwarded although disallowed; %s %s (enforce) %d, %d refused with 403; audit verify: %s",
		len(files), len(reqs), n["curl"], sent.Round(time.Millisecond), idents[0].user, idents[0].token, n["report"], n["violations"],
		idents[1].user, idents[1].token, n["enforce"], n["denied"], verified)
}

// auditPickFiles picks 2n corpus files under 64 KiB, spread over the
// sorted names: n that name GPTBot in a User-agent line and n that do not,
// each with at least three rule-derived paths.
func auditPickFiles(t *testing.T, corpus string, n int) []robotsFile {
	t.Helper()
	dir := filepath.Join(corpus, "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".txt") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	namesGPTBot := regexp.MustCompile(`(?im)^\s*user-agent\s*:\s*gptbot\s*$`)
	var with, without []robotsFile
	for _, name := range names {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(body) > 64<<10 || len(rulePaths(body, 5, 3)) < 5 {
			continue
		}
		f := robotsFile{name: name, body: body}
		if namesGPTBot.Match(body) {
			with = append(with, f)
		} else {
			without = append(without, f)
		}
	}
	if len(with) < n || len(without) < n {
		t.Fatalf("corpus %s: %d files name GPTBot and %d do not, want %d of each", dir, len(with), len(without), n)
	}
	var out []robotsFile
	for i := range n {
		out = append(out, with[i*len(with)/n], without[i*len(without)/n])
	}
	return out
}

// newAuditOrigin starts the i-th origin on 127.0.0.(10+i), or 127.0.0.1
// where other loopback addresses cannot be bound.
func newAuditOrigin(t *testing.T, i int, corpus string, f robotsFile) *auditOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", 10+i))
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(f.body)
			return
		}
		_, _ = io.WriteString(w, "origin:"+r.RequestURI)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(f.body)
	host := ln.Addr().String()
	hostname, _, _ := net.SplitHostPort(host)
	return &auditOrigin{file: f, path: filepath.Join(corpus, "robots", f.name), host: host, hostname: hostname, sha: hex.EncodeToString(sum[:])}
}

// body is what the origin answers for path.
func (o *auditOrigin) body(path string) []byte {
	if path == "/robots.txt" {
		return o.file.body
	}
	return []byte("origin:" + path)
}

// auditRequests builds every identity's requests for paths derived from
// each origin's rules, with the verdict "robotsproxy check FILE TOKEN
// URL..." gives for each.
func auditRequests(t *testing.T, origins []*auditOrigin, idents []*auditIdent) []auditReq {
	t.Helper()
	var reqs []auditReq
	for _, o := range origins {
		paths := rulePaths(o.file.body, 5, 3)
		for _, id := range idents {
			verdicts := checkVerdicts(t, o, id.token, paths)
			for i, path := range paths {
				reqs = append(reqs, auditReq{id: id, o: o, path: path, client: "go", want: verdicts[i]})
			}
		}
	}
	return reqs
}

// checkVerdicts runs "robotsproxy check -json FILE TOKEN URL..." and
// returns its verdict for each path, in order.
func checkVerdicts(t *testing.T, o *auditOrigin, token string, paths []string) []auditVerdict {
	t.Helper()
	args := []string{"check", "-json", o.path, token}
	for _, p := range paths {
		args = append(args, "http://"+o.host+p)
	}
	stdout, stderr, code := runBinary(t, "", args...)
	if code != 0 && code != 1 {
		t.Fatalf("check %s %s: got exit code %d, want 0 or 1; stderr:\n%s", o.file.name, token, code, stderr)
	}
	var out []auditVerdict
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			URL      string `json:"url"`
			Allowed  bool   `json:"allowed"`
			Implicit bool   `json:"implicit_robots_txt"`
			Rule     *struct {
				Text string `json:"text"`
				Line int    `json:"line"`
			} `json:"rule"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check -json %s %s: line %q: %v", o.file.name, token, sc.Bytes(), err)
		}
		v := auditVerdict{allowed: r.Allowed, implicit: r.Implicit}
		if r.Rule != nil {
			v.rule, v.line = r.Rule.Text, r.Rule.Line
		}
		out = append(out, v)
	}
	if len(out) != len(paths) {
		t.Fatalf("check -json %s %s: got %d lines, want %d (one per URL)", o.file.name, token, len(out), len(paths))
	}
	allAllowed := true
	for _, v := range out {
		allAllowed = allAllowed && v.allowed
	}
	if (code == 0) != allAllowed {
		t.Errorf("check %s %s: got exit code %d, but the verdicts say all allowed: %v", o.file.name, token, code, allAllowed)
	}
	return out
}

// sendAuditGo sends the requests with net/http, each identity through the
// proxy URL with its user:password: each identity's first request alone,
// then the rest eight at a time. (The auth throttle counts the checks of
// credentials not yet verified that are in flight from one client address
// against its burst of 5, and answers 429 past it, even though none
// failed; once verified, credentials skip the throttle.)
func sendAuditGo(p *proxyProcess, reqs []auditReq) []auditResp {
	clients := map[*auditIdent]*http.Client{}
	for _, r := range reqs {
		if clients[r.id] == nil {
			tr := &http.Transport{Proxy: http.ProxyURL(p.proxyURL(r.id.user, r.id.pass)), DisableCompression: true}
			defer tr.CloseIdleConnections()
			clients[r.id] = &http.Client{Transport: tr, Timeout: time.Minute}
		}
	}
	res := make([]auditResp, len(reqs))
	first := map[*auditIdent]int{}
	for i, r := range reqs {
		if _, ok := first[r.id]; !ok {
			first[r.id] = i
			res[i] = auditGet(clients[r.id], r.url())
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				res[i] = auditGet(clients[reqs[i].id], reqs[i].url())
			}
		})
	}
	for i := range reqs {
		if first[reqs[i].id] != i {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return res
}

func auditGet(client *http.Client, u string) auditResp {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return auditResp{err: err}
	}
	req.Header.Set("User-Agent", auditUA)
	resp, err := client.Do(req)
	if err != nil {
		return auditResp{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return auditResp{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

// auditCurlSubset is every fourth request again, for curl; curl drops an
// empty query ("/a?" goes out as "/a"), so those are left out.
func auditCurlSubset(reqs []auditReq) []auditReq {
	var out []auditReq
	for i := 0; i < len(reqs); i += 4 {
		if r := reqs[i]; !strings.HasSuffix(r.path, "?") {
			r.client = "curl"
			out = append(out, r)
		}
	}
	return out
}

// sendAuditCurl sends each request with curl --proxy-user, reading the
// status, the header and the body.
func sendAuditCurl(t *testing.T, proxyAddr string, reqs []auditReq) []auditResp {
	t.Helper()
	bodyFile := filepath.Join(t.TempDir(), "body")
	res := make([]auditResp, len(reqs))
	for i, r := range reqs {
		// -g: no URL globbing; --path-as-is: keep "/./" and "/../".
		cmd := exec.Command("curl", "-s", "-g", "--path-as-is", "-D", "-", "-o", bodyFile, "-w", "%{http_code}",
			"-x", "http://"+proxyAddr, "--proxy-user", r.id.user+":"+r.id.pass, "-A", auditUA, r.url())
		cmd.Env = clientEnv("")
		out, err := cmd.Output()
		if err != nil {
			res[i] = auditResp{err: fmt.Errorf("curl %s: %w", r.url(), err)}
			continue
		}
		head, code, _ := strings.Cut(string(out), "\r\n\r\n")
		resp := auditResp{header: http.Header{}}
		resp.status, resp.err = strconv.Atoi(strings.TrimSpace(code))
		for _, l := range strings.Split(head, "\r\n")[1:] {
			if k, v, ok := strings.Cut(l, ":"); ok {
				resp.header.Add(k, strings.TrimSpace(v))
			}
		}
		if resp.body, err = os.ReadFile(bodyFile); err != nil {
			t.Fatal(err)
		}
		res[i] = resp
	}
	return res
}

// checkAuditResp: a report-mode identity gets the origin's response to
// every request, with no X-Robotsproxy-* header; an enforce-mode one gets
// 403 exactly on the disallowed requests.
func checkAuditResp(fail *failures, r auditReq, got auditResp) {
	in := fmt.Sprintf("%s: GET %s (%s) as %s (%s, %s mode)", r.client, r.url(), r.o.file.name, r.id.user, r.id.token, r.id.mode)
	if got.err != nil {
		fail.errorf("%s: %v", in, got.err)
		return
	}
	if r.want.allowed || r.reportOnly() {
		if got.status != http.StatusOK || !bytes.Equal(got.body, r.o.body(r.path)) {
			fail.errorf("%s: got status %d body %.60q, want 200 and the origin's body (check: allowed %v, rule %q)", in, got.status, got.body, r.want.allowed, r.want.rule)
		}
		for k := range got.header {
			if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Robotsproxy-") {
				fail.errorf("%s: forwarded response carries %s: %q, want no X-Robotsproxy-* header", in, k, got.header.Get(k))
			}
		}
		return
	}
	if got.status != http.StatusForbidden {
		fail.errorf("%s: got status %d, want 403 (check: disallowed by line %d %q)", in, got.status, r.want.line, r.want.rule)
		return
	}
	if d, rule := got.header.Get("X-Robotsproxy-Decision"), got.header.Get("X-Robotsproxy-Rule"); d != "deny" || !strings.HasPrefix(rule, fmt.Sprintf("line %d: ", r.want.line)) {
		fail.errorf("%s: 403 with X-Robotsproxy-Decision %q and X-Robotsproxy-Rule %q, want deny and line %d (%q)", in, d, rule, r.want.line, r.want.rule)
	}
}

// checkAuditLogLines: one line per request, carrying the decision check
// made, "enforced": false exactly on the report-mode denials, their rule,
// and the robots.txt version and fetch time.
func checkAuditLogLines(t *testing.T, reqs []auditReq, lines []map[string]any) {
	t.Helper()
	if len(lines) != len(reqs) {
		t.Errorf("audit log: got %d lines, want %d (one per request)", len(lines), len(reqs))
	}
	byKey := map[string][]map[string]any{}
	for _, l := range lines {
		k := fmt.Sprint(l["user"], " ", l["url"])
		byKey[k] = append(byKey[k], l)
	}
	fail := &failures{t: t}
	defer fail.done()
	for _, r := range reqs {
		k := r.id.user + " " + r.url()
		if len(byKey[k]) == 0 {
			fail.errorf("audit log: no line (or one too few) for GET %s as %s", r.url(), r.id.user)
			continue
		}
		l := byKey[k][0]
		byKey[k] = byKey[k][1:]
		want := map[string]any{"decision": "allow", "enforced": true, "product_token": r.id.token, "token_source": "credentials",
			"reason": "no-matching-rule", "robots_sha256": r.o.sha, "robots_fetched_at": fieldContains("T"), "prev": fieldContains(""), "status": 200}
		switch {
		case r.want.implicit:
			want["reason"] = "implicit-robots-txt"
			delete(want, "robots_sha256")
			delete(want, "robots_fetched_at")
		case r.want.rule != "":
			want["reason"], want["rule"], want["rule_line"] = "rule", r.want.rule, r.want.line
		}
		if !r.want.allowed {
			want["decision"], want["enforced"] = "deny", !r.reportOnly()
			if !r.reportOnly() {
				want["status"] = 403
			}
		}
		if ms := auditMismatches(l, want); len(ms) > 0 {
			fail.errorf("audit line for GET %s as %s: %s\n%s", r.url(), r.id.user, strings.Join(ms, "; "), compactJSON(l))
		}
	}
}

// violationKey groups report-mode denials as the report's violations
// table does (token, host, robots.txt, rule).
type violationKey struct {
	token, host, robotsURL, rule string
	line                         int64
}

// tokenCounts are the columns of report.TokenRow the test predicts.
type tokenCounts struct {
	Token                                      string
	Requests, Allowed, WouldDeny, DeniedByRule uint64
}

// checkAuditReport: "audit report -format json" counts every request, its
// violation rows are exactly the report-mode requests check disallows
// (grouped the same way, with the robots.txt version), and the per-token
// counts match.
func checkAuditReport(t *testing.T, logPath string, reqs []auditReq) {
	t.Helper()
	stdout, stderr, code := runBinary(t, "", "audit", "report", "-format", "json", logPath)
	if code != 0 {
		t.Fatalf("audit report -format json: got exit code %d, want 0; stderr:\n%s", code, stderr)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("audit report -format json: %v", err)
	}
	if rep.Summary.Requests != uint64(len(reqs)) || rep.Summary.Skipped != 0 {
		t.Errorf("report summary: got %d requests, %d skipped; want %d and 0", rep.Summary.Requests, rep.Summary.Skipped, len(reqs))
	}
	if in := rep.Integrity; in.Status != report.IntegrityVerified || !in.Genesis || in.NotJSON != 0 || len(in.LastLineSHA256) != 64 {
		t.Errorf("report integrity: got %+v, want the proxy's chain verified from genesis", in)
	}
	want := map[violationKey]uint64{}
	sha := map[violationKey]string{}
	wantTokens := map[string]tokenCounts{}
	for _, r := range reqs {
		row := wantTokens[r.id.token]
		row.Token, row.Requests = r.id.token, row.Requests+1
		switch {
		case r.want.allowed:
			row.Allowed++
		case r.reportOnly():
			row.WouldDeny++
			k := violationKey{r.id.token, r.o.hostname, "http://" + r.o.host + "/robots.txt", r.want.rule, int64(r.want.line)}
			want[k]++
			sha[k] = r.o.sha
		default:
			row.DeniedByRule++
		}
		wantTokens[r.id.token] = row
	}
	got := map[violationKey]uint64{}
	for _, v := range rep.Violations.Rows {
		k := violationKey{v.Token, v.Host, v.RobotsURL, v.Rule, v.RuleLine}
		got[k] += v.Count
		if v.Reason != "rule" || v.RobotsSHA256 != sha[k] || v.Error != 0 {
			t.Errorf("violation row %+v: want reason rule, robots_sha256 %q, error 0", v, sha[k])
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("violations %+v: got count %d, want %d (report-mode requests check disallows)", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("violations %+v: got count %d, want no row (check allows these, or they were enforced)", k, n)
		}
	}
	if len(want) == 0 || rep.Violations.BoundHit {
		t.Errorf("violations: want some rows, all tracked (got %d rows, bound hit %v)", len(want), rep.Violations.BoundHit)
	}
	for _, row := range rep.Tokens.Rows {
		w := wantTokens[row.Token]
		g := tokenCounts{Token: row.Token, Requests: row.Requests, Allowed: row.Allowed, WouldDeny: row.WouldDeny, DeniedByRule: row.DeniedByRule}
		if g != w || row.OtherRefusals+row.NotDecided+row.DeniedUnreachable != 0 {
			t.Errorf("token row %+v: want %+v", row, w)
		}
		delete(wantTokens, row.Token)
	}
	for tok, w := range wantTokens {
		t.Errorf("token %s: no row in the report, want %+v", tok, w)
	}
}

// auditCoverage counts id's requests that a rule or no rule allows, and
// those disallowed.
func auditCoverage(reqs []auditReq, id *auditIdent) map[string]int {
	c := map[string]int{}
	for _, r := range reqs {
		switch {
		case r.id != id || r.want.implicit:
		case r.want.allowed:
			c["allowed"]++
		default:
			c["disallowed"]++
		}
	}
	return c
}

// auditCounts counts the requests by mode, client and outcome.
func auditCounts(reqs []auditReq) map[string]int {
	n := map[string]int{}
	for _, r := range reqs {
		n[r.id.mode]++
		n[r.client]++
		switch {
		case r.reportOnly():
			n["violations"]++
		case !r.want.allowed:
			n["denied"]++
		}
	}
	return n
}
