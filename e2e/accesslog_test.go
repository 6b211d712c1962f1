package e2e

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/accesslog"
	"github.com/robotsproxy/robotsproxy/internal/check"
	"github.com/robotsproxy/robotsproxy/internal/identity"
)

// The site's robots.txt history for the generated log: three versions,
// named by the UTC time each came into force (the second with "-" for
// ":"). disallows is what each says, written by hand: the test's
// expectations come from it, not from the decider.
var accessLogVersions = []struct {
	name, body string
	disallows  func(gpt bool, kind string) bool
}{
	{"2026-11-01T00:00:00Z.txt", "User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /ai/\n",
		func(gpt bool, kind string) bool { return gpt && kind == "ai" || !gpt && kind == "private" }},
	{"2026-11-10T12-00-00Z.txt", "User-agent: *\nDisallow: /private/\nDisallow: /drafts/\n\nUser-agent: GPTBot\nDisallow: /\n",
		func(gpt bool, kind string) bool { return gpt || kind == "private" || kind == "drafts" }},
	{"2026-11-15T00:00:00Z.txt", "User-agent: *\nAllow: /\nDisallow: /drafts/\n\nUser-agent: GPTBot\nDisallow: /\n",
		func(gpt bool, kind string) bool { return gpt || kind == "drafts" }},
}

// accessLogZones are spans of the log, clear of the version changes by an
// hour, and the versions a crawler that never fetches robots.txt could be
// using in each (those in force in the 24 hours before a request).
var accessLogZones = []struct {
	from, to string
	versions []int
}{
	{"2026-11-02T00:00:00Z", "2026-11-10T11:00:00Z", []int{0}},
	{"2026-11-10T13:00:00Z", "2026-11-11T11:00:00Z", []int{0, 1}},
	{"2026-11-11T13:00:00Z", "2026-11-14T23:00:00Z", []int{1}},
	{"2026-11-15T01:00:00Z", "2026-11-15T23:00:00Z", []int{1, 2}},
	{"2026-11-16T01:00:00Z", "2026-11-20T00:00:00Z", []int{2}},
}

// want is a generated request and what the command must say of it.
type want struct {
	t        time.Time
	client   string
	ua       string
	path     string
	status   int
	kind     string // "", violation, disputable, impostor
	identity string // "" for a token without published ranges
	version  int    // the deciding version, for violation and disputable
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// realAgents returns real crawler User-Agent headers from
// testdata/agents: the first that names each of Googlebot, bingbot and
// GPTBot, and 12 others, not Google's, whose product tokens have no
// published ranges here.
func realAgents(t testing.TB) (google, bing, gpt string, others []string) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "agents", "crawler-user-agents", "crawler-user-agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Instances []string `json:"instances"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	seen := map[string]bool{}
	for _, e := range list {
		for _, ua := range e.Instances {
			c := id.Identify(ua).Candidates
			if len(c) != 1 {
				continue
			}
			switch tok := strings.ToLower(c[0]); {
			case tok == "googlebot" && google == "":
				google = ua
			case tok == "bingbot" && bing == "":
				bing = ua
			case tok == "gptbot" && gpt == "":
				gpt = ua
			case !strings.Contains(tok, "google") && tok != "bingbot" && tok != "gptbot" && !seen[tok] && len(others) < 12:
				seen[tok] = true
				others = append(others, ua)
			}
		}
	}
	if google == "" || bing == "" || gpt == "" || len(others) < 12 {
		t.Fatalf("testdata/agents: want Googlebot, bingbot, GPTBot and 12 other crawlers, got %q %q %q %d", google, bing, gpt, len(others))
	}
	return google, bing, gpt, others
}

// generateAccessLog returns a Combined Log Format log of about 3,000
// requests: background traffic every version allows, crawlers that never
// fetch robots.txt requesting paths at random in each zone, impostors,
// browsers, and hand-placed scenarios of crawlers that re-fetch
// robots.txt. Three hostile lines are added. want[i] describes line i+1
// (nil for a hostile line).
func generateAccessLog(t *testing.T) ([]byte, []*want) {
	google, bing, gpt, others := realAgents(t)
	rng := rand.New(rand.NewPCG(27, 9309))
	in := func(pfx string) string { return fmt.Sprintf("%s.%d", pfx, 1+rng.IntN(60)) }
	googleIP := func() string { return fmt.Sprintf("66.249.79.%d", 225+rng.IntN(30)) }
	bingIP := func() string { return in("157.55.39") }
	gptIP := func() string { return in("20.171.206") }
	outside := func() string { return fmt.Sprintf("203.0.113.%d", 1+rng.IntN(250)) }
	span := func(from, to string) time.Time {
		a, b := mustTime(from), mustTime(to)
		return a.Add(time.Duration(rng.Int64N(int64(b.Sub(a)/time.Second))) * time.Second)
	}
	var ws []*want
	add := func(w want) { ws = append(ws, &w) }
	// Background: allowed by every version, for every crawler but GPTBot.
	crawlers := append([]string{google, bing}, others...)
	ips := func(ua string) (string, string) {
		switch ua {
		case google:
			return googleIP(), accesslog.Verified
		case bing:
			return bingIP(), accesslog.Verified
		}
		return fmt.Sprintf("198.51.100.%d", 1+rng.IntN(250)), ""
	}
	for range 2000 {
		ua := crawlers[rng.IntN(len(crawlers))]
		ip, idv := ips(ua)
		add(want{t: span("2026-11-02T00:00:00Z", "2026-11-20T00:00:00Z"), client: ip, ua: ua,
			path: fmt.Sprintf("/public/%d.html", rng.IntN(500)), status: 200, identity: idv})
	}
	// Browsers: counted, never judged, whatever they ask for.
	for range 200 {
		add(want{t: span("2026-11-02T00:00:00Z", "2026-11-20T00:00:00Z"), client: outside(),
			ua: "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0", path: "/private/b", status: 200})
	}
	// Crawlers that never fetch robots.txt: judged on the zone's versions.
	kinds := []string{"private", "drafts", "ai", "public"}
	nonFetchers := append([]string{gpt}, others...)
	for range 600 {
		ua := nonFetchers[rng.IntN(len(nonFetchers))]
		z := accessLogZones[rng.IntN(len(accessLogZones))]
		kind := kinds[rng.IntN(len(kinds))]
		w := want{t: span(z.from, z.to), ua: ua, path: fmt.Sprintf("/%s/%d", kind, rng.IntN(100)), status: 200}
		w.client, w.identity = ips(ua)
		if ua == gpt {
			w.client, w.identity = gptIP(), accesslog.Verified
		}
		w.kind, w.version = judgeByHand(ua == gpt, kind, z.versions)
		add(w)
	}
	// Impostors: ranged tokens from elsewhere; never judged.
	for range 150 {
		ua := []string{google, bing, gpt}[rng.IntN(3)]
		add(want{t: span("2026-11-02T00:00:00Z", "2026-11-20T00:00:00Z"), client: outside(), ua: ua,
			path: "/" + kinds[rng.IntN(len(kinds))] + "/x", status: 200, kind: accesslog.KindImpostor, identity: accesslog.Impostor})
	}
	// Crawlers that re-fetch robots.txt.
	g := func(at, path string, status int, kind string, version int) {
		add(want{t: mustTime(at), client: googleIP(), ua: google, path: path, status: status, kind: kind, identity: accesslog.Verified, version: version})
	}
	b := func(at, path string, status int, kind string, version int) {
		add(want{t: mustTime(at), client: bingIP(), ua: bing, path: path, status: status, kind: kind, identity: accesslog.Verified, version: version})
	}
	b("2026-11-10T13:00:00Z", "/robots.txt", 200, "", 0)
	b("2026-11-10T14:00:00Z", "/drafts/a", 200, accesslog.KindViolation, 1) // since its fetch: the new version only
	g("2026-11-08T00:00:00Z", "/robots.txt", 200, "", 0)
	add(want{t: mustTime("2026-11-10T13:30:00Z"), client: outside(), ua: google, path: "/robots.txt", status: 200,
		kind: accesslog.KindImpostor, identity: accesslog.Impostor}) // refreshes nothing of Googlebot's
	g("2026-11-10T20:00:00Z", "/drafts/g", 200, accesslog.KindDisputable, 1) // fetch 2 days old: the 24 hours decide
	g("2026-11-11T13:00:00Z", "/drafts/f", 200, accesslog.KindViolation, 1)
	g("2026-11-15T01:00:00Z", "/robots.txt", 200, "", 0)
	g("2026-11-15T02:00:00Z", "/private/c", 200, "", 0) // allowed by the version it fetched
	g("2026-11-15T03:00:00Z", "/drafts/d", 200, accesslog.KindViolation, 2)
	b("2026-11-15T05:00:00Z", "/robots.txt", 503, "", 0)                      // a failed fetch refreshes nothing
	b("2026-11-15T06:00:00Z", "/private/e", 200, accesslog.KindDisputable, 1) // so the 24 hours decide
	slices.SortStableFunc(ws, func(x, y *want) int { return x.t.Compare(y.t) })

	var buf bytes.Buffer
	var lines []*want
	for i, w := range ws {
		switch i {
		case 10:
			buf.WriteString("this is not a log line\n")
			lines = append(lines, nil)
		case 500:
			buf.WriteString(`1.2.3.4 - - [05/Nov/2026:00:00:00 +0000] "GET /` + strings.Repeat("a", 1<<20) + " HTTP/1.1\" 200 1 \"-\" \"x\"\n")
			lines = append(lines, nil)
		case 1000:
			buf.WriteString("1.2.3.4 - - [05/Nov/2026:00:00:00 +0000] \"GET /\xff\xfe HTTP/1.1\" 200 1 \"-\" \"Googlebot\"\n")
			lines = append(lines, nil)
		}
		fmt.Fprintf(&buf, "%s - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"%s\"\n", w.client, w.t.Format("02/Jan/2006:15:04:05 -0700"),
			w.path, w.status, 100+rng.IntN(9000), strings.ReplaceAll(w.ua, `"`, `\"`))
		lines = append(lines, w)
	}
	return buf.Bytes(), lines
}

// judgeByHand applies the rule to the hand-written table: a violation when
// every version disallows, disputable when some do; the deciding version
// is the latest that disallows.
func judgeByHand(gpt bool, kind string, versions []int) (string, int) {
	deny, decider := 0, -1
	for _, v := range versions {
		if accessLogVersions[v].disallows(gpt, kind) {
			deny++
			decider = v
		}
	}
	switch {
	case deny == 0:
		return "", 0
	case deny == len(versions):
		return accesslog.KindViolation, decider
	}
	return accesslog.KindDisputable, decider
}

func writeVersions(t *testing.T) string {
	dir := t.TempDir()
	for _, v := range accessLogVersions {
		if err := os.WriteFile(filepath.Join(dir, v.name), []byte(v.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func rangesArgs() []string {
	d := filepath.Join("..", "testdata", "ipranges")
	return []string{"-ip-ranges", "Googlebot=" + filepath.Join(d, "googlebot-fixture.json"), "-ip-ranges", "bingbot=" + filepath.Join(d, "bingbot-fixture.json"),
		"-ip-ranges", "GPTBot=" + filepath.Join(d, "gptbot-fixture.json")}
}

// TestAccessLogFindsExactlyThePlanted runs "audit access-log" on a
// generated log, as a file, as gzip on stdin, and against the history in
// a git repository, and checks that it finds exactly the planted
// violations, disputable requests and impostors, each with the right
// identity and deciding version, and that every verdict is check's
// against that version.
func TestAccessLogFindsExactlyThePlanted(t *testing.T) {
	log, lines := generateAccessLog(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	if err := os.WriteFile(logPath, log, 0o644); err != nil {
		t.Fatal(err)
	}
	versions := writeVersions(t)
	args := append([]string{"audit", "access-log", "-robots", versions}, rangesArgs()...)

	out, stderr, code := runBinary(t, "", append(args, "-format", "json", logPath)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := decodeResult(t, out)
	checkPlanted(t, res, lines, logPath, func(f accesslog.Finding) string { return filepath.Base(f.RobotsSource) })
	if s := res.Summary.Skipped; s.Malformed != 1 || s.TooLong != 1 || s.InvalidUTF8 != 1 {
		t.Errorf("skipped = %+v, want one of each", s)
	}
	if res.Summary.Browsers != 200 || res.Summary.Lines != int64(len(lines)) {
		t.Errorf("browsers %d lines %d, want 200 and %d", res.Summary.Browsers, res.Summary.Lines, len(lines))
	}
	// Every verdict is check's, against the version that decided.
	for _, f := range append(slices.Clone(res.Violations), res.Disputable...) {
		var buf bytes.Buffer
		all, err := check.Run(f.RobotsSource, f.UserAgent, []string{f.Path}, check.Options{JSON: true, Stdout: &buf})
		if err != nil {
			t.Fatal(err)
		}
		var cr check.Result
		if err := json.Unmarshal(buf.Bytes(), &cr); err != nil {
			t.Fatal(err)
		}
		body, _ := os.ReadFile(f.RobotsSource)
		sum := sha256.Sum256(body)
		if all || cr.Allowed || cr.Rule == nil || cr.Rule.Line != f.RuleLine || cr.Rule.Text != f.Rule || hex.EncodeToString(sum[:]) != f.RobotsSHA256 {
			t.Errorf("line %d: access-log says %s by %q (line %d, %s); check says allowed=%v rule=%+v sha256=%x",
				f.Line, f.Path, f.Rule, f.RuleLine, f.RobotsSHA256, cr.Allowed, cr.Rule, sum)
		}
	}

	t.Run("gzip on stdin", func(t *testing.T) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(log)
		zw.Close()
		out, stderr, code := runBinary(t, gz.String(), append(args, "-format", "json", "-")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		checkPlanted(t, decodeResult(t, out), lines, "-", func(f accesslog.Finding) string { return filepath.Base(f.RobotsSource) })
	})

	t.Run("git history", func(t *testing.T) {
		repo, commits := gitVersions(t)
		gargs := append([]string{"audit", "access-log", "-robots", "git:" + repo + ":site/robots.txt"}, rangesArgs()...)
		out, stderr, code := runBinary(t, "", append(gargs, "-format", "json", logPath)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		checkPlanted(t, decodeResult(t, out), lines, logPath, func(f accesslog.Finding) string { return commits[f.RobotsSource] })
	})
}

func decodeResult(t *testing.T, out string) accesslog.Result {
	t.Helper()
	var res accesslog.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%.500s", err, out)
	}
	return res
}

// checkPlanted compares the findings with the planted ones; version names
// a finding's deciding version as accessLogVersions does.
func checkPlanted(t *testing.T, res accesslog.Result, lines []*want, file string, version func(accesslog.Finding) string) {
	t.Helper()
	got := map[int64]string{}
	for kind, fs := range map[string][]accesslog.Finding{accesslog.KindViolation: res.Violations, accesslog.KindDisputable: res.Disputable, accesslog.KindImpostor: res.Impostors} {
		for _, f := range fs {
			if prev, dup := got[f.Line]; dup {
				t.Errorf("line %d is both %s and %s", f.Line, prev, kind)
			}
			got[f.Line] = kind
			w := lines[f.Line-1]
			switch {
			case w == nil:
				t.Errorf("line %d (hostile) is a %s", f.Line, kind)
				continue
			case w.kind != kind:
				t.Errorf("line %d %s %s %q: got %s, want %q", f.Line, w.t.Format(time.RFC3339), w.path, w.ua, kind, w.kind)
			case f.File != file || f.Client != w.client || f.Path != w.path || f.UserAgent != w.ua || !f.Time.Equal(w.t):
				t.Errorf("line %d: evidence %+v does not match the line %+v", f.Line, f, *w)
			case f.Identity != w.identity:
				t.Errorf("line %d: identity %q, want %q", f.Line, f.Identity, w.identity)
			case kind != accesslog.KindImpostor && version(f) != accessLogVersions[w.version].name:
				t.Errorf("line %d: decided by %q, want %s", f.Line, version(f), accessLogVersions[w.version].name)
			case kind != accesslog.KindImpostor && (f.Rule == "" || f.RuleLine == 0 || len(f.RobotsSHA256) != 64):
				t.Errorf("line %d: evidence missing: %+v", f.Line, f)
			}
		}
	}
	n := map[string]int{}
	for i, w := range lines {
		if w != nil && w.kind != "" {
			n[w.kind]++
			if got[int64(i+1)] == "" {
				t.Errorf("line %d %s %s %q: planted %s not found", i+1, w.t.Format(time.RFC3339), w.path, w.ua, w.kind)
			}
		}
	}
	if n[accesslog.KindViolation] < 100 || n[accesslog.KindDisputable] < 30 || n[accesslog.KindImpostor] < 100 {
		t.Errorf("planted %v: too few to mean much", n)
	}
}

// gitVersions commits the versions to site/robots.txt of a new git
// repository, each with its time as the committer date, the last after a
// rename (followed by git log --follow); it returns the repository and
// the version name of each commit ("git:HASH").
func gitVersions(t *testing.T) (string, map[string]string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: .ci/run installs it")
	}
	repo := t.TempDir()
	run := func(date string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date, "GIT_AUTHOR_NAME=t",
			"GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "init", "-q")
	commits := map[string]string{}
	name := "robots.txt"
	for i, v := range accessLogVersions {
		from, err := accesslog.VersionTime(v.name)
		if err != nil {
			t.Fatal(err)
		}
		date := from.Format(time.RFC3339)
		if i == 2 { // renamed in the same commit as the last change
			os.MkdirAll(filepath.Join(repo, "site"), 0o755)
			run(date, "mv", name, "site/robots.txt")
			name = "site/robots.txt"
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(v.body), 0o644); err != nil {
			t.Fatal(err)
		}
		run(date, "add", "-A")
		run(date, "commit", "-q", "-m", v.name)
		commits["git:"+run(date, "rev-parse", "HEAD")] = v.name
	}
	return repo, commits
}
