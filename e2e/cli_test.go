package e2e

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
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/robots"
)

// runBinary runs the built robotsproxy with args and stdin and returns its
// output and exit code.
func runBinary(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		t.Fatalf("robotsproxy %q: %v; stderr:\n%s", args, err, errb.String())
	}
	return out.String(), errb.String(), code
}

func TestServeBrokenConfig(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string // in stderr
	}{
		{"max_ttl above 24h", "cache:\n  max_ttl: 48h\n", []string{"max_ttl", "cache.max_ttl"}},
		{"misspelt key", "robots:\n  timeoutt: 5s\n", []string{"timeoutt", "robots.timeoutt", "did you mean robots.timeout?"}},
		{"misspelt top-level key", "allow_privat: true\n", []string{"allow_privat (line 1)", "did you mean allow_private?"}},
		{"duration in days", "cache:\n  max_ttl: 1 day\n", []string{"cache.max_ttl (line 2)", "not a duration", "such as 500ms, 30s"}},
		{"size with a unit", "robots:\n  max_bytes: 10MB\n", []string{"robots.max_bytes (line 2)", "not a size", "1048576"}},
		{"bad mode", "mode: enforcing\n", []string{"mode: must be one of enforce, report", `for example "mode: enforce"`}},
		{"wrong type", "cache:\n  max_entries: lots\n", []string{"cache.max_entries"}},
		{"bad regexp", "identity:\n  overrides:\n    - user_agent: \"(\"\n      token: Bot\n", []string{"identity.overrides[0].user_agent"}},
		{"bad CIDR", "allow_private_ranges: [10.0.0.0/33]\n", []string{"allow_private_ranges"}},
		// A YAML syntax error leaves no key to name: the line is given.
		{"syntax error", "listen: [", []string{"line 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "broken.yaml")
			if err := os.WriteFile(cfg, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runBinary(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0", "-allow-private")
			if code != 2 {
				t.Fatalf("serve -config with %q: got exit code %d, want 2; stderr:\n%s", tt.config, code, stderr)
			}
			for _, w := range append(tt.want, cfg) {
				if !strings.Contains(stderr, w) {
					t.Errorf("serve -config with %q: got stderr %q, want it to contain %q", tt.config, stderr, w)
				}
			}
			if strings.Contains(stderr, `"listening"`) || stdout != "" {
				t.Errorf("serve -config with %q: got stdout %q and stderr %q, want no listener started", tt.config, stdout, stderr)
			}
		})
	}
}

// checkFixture is a corpus robots.txt file with URLs derived from its rules
// and the expected verdict for each, for one User-Agent.
type checkFixture struct {
	file    robotsFile
	path    string // of the file on disk
	ua      string
	parsed  *robots.Robots
	id      identity.Identity
	urls    []string
	verdict map[string]robots.Verdict // by URL
}

// checkFixtures picks corpus files whose derived URLs include both allowed
// and disallowed ones for the first crawler, so that every exit code shows.
func checkFixtures(t *testing.T, n int) []checkFixture {
	t.Helper()
	corpus := corpusDir(t)
	ua := pickAgents(t, corpus)[0]
	id := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil).Identify(ua)
	var out []checkFixture
	for _, f := range pickRobotsFiles(t, corpus, 80) {
		fx := checkFixture{file: f, path: filepath.Join(corpus, "robots", f.name), ua: ua, parsed: robots.Parse(f.body), id: id, verdict: map[string]robots.Verdict{}}
		allowed, denied := 0, 0
		for _, p := range rulePaths(f.body, 6, 4) {
			u := "https://www.example.org" + p
			v := fx.parsed.Test(robots.PathOf(u), id.Candidates...)
			fx.urls = append(fx.urls, u)
			fx.verdict[u] = v
			if v.Allowed {
				allowed++
			} else {
				denied++
			}
		}
		if allowed > 0 && denied > 0 {
			out = append(out, fx)
		}
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("found %d corpus files with allowed and disallowed URLs for %q, want %d", len(out), ua, n)
	return nil
}

// checkTextOutput checks "ALLOWED <url>" / "DISALLOWED <url>" lines,
// each optionally followed by a tab and a detail, one per URL in order.
func checkTextOutput(t *testing.T, fx checkFixture, urls []string, stdout string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(urls) {
		t.Fatalf("check %s: got %d output lines, want %d (one per URL)", fx.file.name, len(lines), len(urls))
	}
	bad := 0
	for i, line := range lines {
		word, rest, _ := strings.Cut(line, " ")
		u, _, _ := strings.Cut(rest, "\t")
		want := "ALLOWED"
		if !fx.verdict[urls[i]].Allowed {
			want = "DISALLOWED"
		}
		if word != want || u != urls[i] {
			if bad++; bad <= 20 {
				t.Errorf("check %s %q, line %d: got %q, want %q followed by a tab and detail or nothing", fx.file.name, fx.ua, i+1, line, want+" "+urls[i])
			}
		}
	}
}

func TestCheckExitCodesAndStdin(t *testing.T) {
	for _, fx := range checkFixtures(t, 5) {
		t.Run(fx.file.name, func(t *testing.T) {
			var allowed []string
			for _, u := range fx.urls {
				if fx.verdict[u].Allowed {
					allowed = append(allowed, u)
				}
			}

			stdout, stderr, code := runBinary(t, "", append([]string{"check", fx.path, fx.ua}, allowed...)...)
			if code != 0 {
				t.Errorf("check %s %q with allowed URLs only: got exit code %d, want 0; stderr: %s", fx.file.name, fx.ua, code, stderr)
			}
			checkTextOutput(t, fx, allowed, stdout)

			stdout, stderr, code = runBinary(t, "", append([]string{"check", fx.path, fx.ua}, fx.urls...)...)
			if code != 1 {
				t.Errorf("check %s %q with a disallowed URL: got exit code %d, want 1; stderr: %s", fx.file.name, fx.ua, code, stderr)
			}
			checkTextOutput(t, fx, fx.urls, stdout)

			// "-" reads URLs from stdin, one per line, between the
			// URLs given as arguments.
			var in strings.Builder
			var urls []string
			urls = append(urls, allowed[0])
			for range 200 {
				for _, u := range fx.urls {
					in.WriteString(u + "\n")
					urls = append(urls, u)
				}
			}
			urls = append(urls, allowed[0])
			stdout, stderr, code = runBinary(t, in.String(), "check", fx.path, fx.ua, allowed[0], "-", allowed[0])
			if code != 1 {
				t.Errorf("check %s %q - with %d stdin lines: got exit code %d, want 1; stderr: %s", fx.file.name, fx.ua, len(urls)-2, code, stderr)
			}
			checkTextOutput(t, fx, urls, stdout)

			stdout, _, code = runBinary(t, strings.Repeat(allowed[0]+"\n", 1000), "check", fx.path, fx.ua, "-")
			if code != 0 {
				t.Errorf("check %s %q - with 1000 allowed stdin lines: got exit code %d, want 0", fx.file.name, fx.ua, code)
			}
			if n := strings.Count(stdout, "\n"); n != 1000 {
				t.Errorf("check %s %q - with 1000 stdin lines: got %d output lines, want 1000", fx.file.name, fx.ua, n)
			}
		})
	}
}

func TestCheckUsageErrors(t *testing.T) {
	fx := checkFixtures(t, 1)[0]
	missing := filepath.Join(t.TempDir(), "missing-robots.txt")
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no arguments", []string{"check"}, "ROBOTS_FILE USER_AGENT URL"},
		{"no URL", []string{"check", fx.path, fx.ua}, "ROBOTS_FILE USER_AGENT URL"},
		{"unknown flag", []string{"check", "-yaml", fx.path, fx.ua, "/"}, "-yaml"},
		{"missing file", []string{"check", missing, fx.ua, "/"}, "missing-robots.txt"},
		{"directory", []string{"check", filepath.Dir(fx.path), fx.ua, "/"}, "robots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, "", tt.args...)
			if code != 2 {
				t.Errorf("robotsproxy %q: got exit code %d, want 2; stdout %q", tt.args, code, stdout)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("robotsproxy %q: got stderr %q, want it to contain %q", tt.args, stderr, tt.want)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	for _, fx := range checkFixtures(t, 3) {
		t.Run(fx.file.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, "", append([]string{"check", "-json", fx.path, fx.ua}, fx.urls...)...)
			if code != 1 {
				t.Errorf("check -json %s: got exit code %d, want 1; stderr: %s", fx.file.name, code, stderr)
			}
			sc := bufio.NewScanner(strings.NewReader(stdout))
			sc.Buffer(nil, 1<<20)
			i := 0
			for ; sc.Scan(); i++ {
				if i >= len(fx.urls) {
					t.Fatalf("check -json %s: got more than %d lines, want one per URL", fx.file.name, len(fx.urls))
				}
				checkJSONLine(t, fx, fx.urls[i], sc.Bytes())
			}
			if i != len(fx.urls) {
				t.Errorf("check -json %s: got %d lines, want %d", fx.file.name, i, len(fx.urls))
			}
		})
	}
}

func checkJSONLine(t *testing.T, fx checkFixture, u string, line []byte) {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		t.Fatalf("check -json %s %s: line %q is not a JSON object: %v", fx.file.name, u, line, err)
	}
	for _, f := range []string{"url", "allowed", "product_tokens", "groups", "star_fallback"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("check -json %s %s: got %s, want field %q", fx.file.name, u, line, f)
		}
	}
	var got struct {
		URL           string   `json:"url"`
		Allowed       bool     `json:"allowed"`
		ProductTokens []string `json:"product_tokens"`
		Groups        []struct {
			Line   int      `json:"line"`
			Agents []string `json:"agents"`
		} `json:"groups"`
		Rule *struct {
			Text string `json:"text"`
			Line int    `json:"line"`
		} `json:"rule"`
		StarFallback bool `json:"star_fallback"`
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("check -json %s %s: line %s: %v", fx.file.name, u, line, err)
	}
	v := fx.verdict[u]
	var wantLines, gotLines []int
	for _, gi := range v.Groups() {
		wantLines = append(wantLines, fx.parsed.Group(gi).Line)
	}
	for _, g := range got.Groups {
		gotLines = append(gotLines, g.Line)
	}
	type fieldCheck struct {
		field     string
		got, want any
	}
	checks := []fieldCheck{
		{"url", got.URL, u},
		{"allowed", got.Allowed, v.Allowed},
		{"product_tokens", fmt.Sprint(got.ProductTokens), fmt.Sprint(fx.id.Candidates)},
		{"groups[].line", fmt.Sprint(gotLines), fmt.Sprint(wantLines)},
		{"star_fallback", got.StarFallback, v.Fallback},
		{"rule present", got.Rule != nil, v.Matched()},
	}
	if got.Rule != nil && v.Matched() {
		checks = append(checks, fieldCheck{"rule.text", got.Rule.Text, v.Rule.Text()}, fieldCheck{"rule.line", got.Rule.Line, v.Rule.Line})
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("check -json %s %q %s: field %s: got %v, want %v", fx.file.name, fx.ua, u, c.field, c.got, c.want)
		}
	}
}

// TestCLIHelpAndVersion runs the binary's help and version forms: each
// exits 0 with its text on stdout.
func TestCLIHelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "commands:"},
		{[]string{"-h"}, "commands:"},
		{[]string{"--help"}, "commands:"},
		{[]string{"help"}, "commands:"},
		{[]string{"audit", "-h"}, "usage: robotsproxy audit SUBCOMMAND"},
		{[]string{"audit", "verify", "-h"}, "usage: robotsproxy audit verify"},
		{[]string{"serve", "-h"}, "usage: robotsproxy serve"},
		{[]string{"version"}, "\ngo go1."},
		{[]string{"-version"}, "robotsproxy "},
	}
	for _, tt := range tests {
		stdout, stderr, code := runBinary(t, "", tt.args...)
		if code != 0 || !strings.Contains(stdout, tt.want) {
			t.Errorf("robotsproxy %q: got exit code %d, stdout %q, stderr %q; want 0 and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	if _, stderr, code := runBinary(t, "", "check", "robots.txt", "https://x.org/action/x", "ExampleBot"); code != 2 || !strings.Contains(stderr, "usage: robotsproxy check") {
		t.Errorf("check with USER_AGENT and URL swapped: got exit code %d, stderr %q; want 2 and the usage", code, stderr)
	}
}

// startupLine waits for serve's "started" line on stderr and returns it,
// raw and decoded.
func startupLine(t *testing.T, p *proxyProcess) (string, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range p.stderr.lines() {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "started" {
				return line, m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no \"started\" line within 30s; stderr:\n%s", p.stderr)
	return "", nil
}

// TestStartupLine: serve writes one JSON line at start saying what is in
// force; the fleet store appears as scheme and host only.
func TestStartupLine(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf(`mode: report
log:
  file: %s
audit:
  archive_dir: %s
politeness:
  crawl_delay: enforce
  max_concurrent_per_host: 4
usage:
  enforce: true
  purposes:
    GPTBot: [train-ai]
shared:
  redis_url: redis://robots:s3cret@127.0.0.1:1/2
`, filepath.Join(dir, "audit.log"), filepath.Join(dir, "archive"))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "", "-config", cfg)
	raw, m := startupLine(t, p)
	want := map[string]any{
		"mode":        "report",
		"config":      cfg,
		"audit_log":   filepath.Join(dir, "audit.log"),
		"archive":     filepath.Join(dir, "archive"),
		"ca":          "on", // no CA configured: the one in the data directory
		"fleet_store": "redis://127.0.0.1:1",
		"listeners":   map[string]any{"proxy": p.proxyAddr, "admin": p.adminAddr},
		"politeness":  map[string]any{"crawl_delay": "enforce", "backoff": "ignore", "on_early": "wait", "max_concurrent_per_host": 4.0},
		"usage":       map[string]any{"enforce": true, "purposes_for": []any{"GPTBot"}},
	}
	for k, v := range want {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("startup line %s: got %v, want %v; line %s", k, m[k], v, raw)
		}
	}
	if strings.Contains(raw, "s3cret") || strings.Contains(raw, "robots:") {
		t.Errorf("startup line shows the store's credentials: %s", raw)
	}
	if n := strings.Count(p.stderr.String(), `"message":"started"`); n != 1 {
		t.Errorf("got %d startup lines, want 1", n)
	}
	p.stop(t)

	// Without a file: the built-in defaults, and the flags in force.
	p = startServe(t, t.TempDir(), "-mode", "enforce")
	if _, m = startupLine(t, p); m["config"] != "none (built-in defaults)" || m["mode"] != "enforce" || m["fleet_store"] != "off" || m["archive"] != "off" || m["audit_log"] != "stdout" {
		t.Errorf("startup line without a file: got %v", m)
	}
	p.stop(t)
}

// TestServeAuditFlags: -audit-log, -archive-dir and -mode report set up
// auditing without a configuration file, and "audit verify" re-decides
// the lines from that archive; without it, it checks the chain only.
func TestServeAuditFlags(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: ExampleBot\nDisallow: /private\n")
			return
		}
		io.WriteString(w, "origin")
	}))
	defer origin.Close()
	dir := t.TempDir()
	logPath, archive := filepath.Join(dir, "audit.log"), filepath.Join(dir, "archive")
	p := startServe(t, t.TempDir(), "-audit-log", logPath, "-archive-dir", archive, "-mode", "report")
	proxyURL, _ := url.Parse("http://" + p.proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}
	for _, path := range []string{"/public", "/private/x"} {
		req, _ := http.NewRequest("GET", origin.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 { // report mode forwards the disallowed one too
			t.Errorf("GET %s: got status %d, want 200 in report mode", path, resp.StatusCode)
		}
	}
	p.stop(t)
	if p.stdout.String() != "" {
		t.Errorf("stdout: got %q, want the audit lines in -audit-log only", p.stdout.String())
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 || !strings.Contains(string(b), `"decision":"deny","reason":"rule","enforced":false`) {
		t.Errorf("audit log: got %d lines, want 2 in report mode:\n%s", n, b)
	}
	stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, logPath)
	if code != 0 || !strings.Contains(stdout, "2 verified") {
		t.Errorf("audit verify -archive: got exit code %d, want 0 and 2 verified; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	cmd := exec.Command(binary, "audit", "verify", logPath)
	cmd.Dir = t.TempDir() // no config.yaml: no archive
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "OK: the chain holds") {
		t.Errorf("audit verify without an archive: got %v, stdout:\n%s", err, out)
	}
}

// TestHealthcheck probes a running serve's admin listener with the
// binary's healthcheck, as a container's HEALTHCHECK does.
func TestHealthcheck(t *testing.T) {
	p := startServe(t, t.TempDir())
	_, port, _ := strings.Cut(p.adminAddr, ":")
	for _, args := range [][]string{
		{"healthcheck", "-addr", p.adminAddr},
		{"healthcheck", "-addr", "0.0.0.0:" + port, "-path", "/healthz", "-timeout", "5s"},
	} {
		stdout, stderr, code := runBinary(t, "", args...)
		if code != 0 {
			t.Errorf("robotsproxy %q: got exit code %d, want 0; stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	p.stop(t)
	_, stderr, code := runBinary(t, "", "healthcheck", "-addr", p.adminAddr, "-timeout", "2s")
	if code != 1 || !strings.Contains(stderr, "healthcheck:") {
		t.Errorf("healthcheck of a stopped serve: got exit code %d, stderr %q; want 1 and the reason", code, stderr)
	}
}

// TestDockerConfigServes: the image's configuration starts with the
// image's ENTRYPOINT flags (ports 0 here), and its admin listener answers
// the image's HEALTHCHECK.
func TestDockerConfigServes(t *testing.T) {
	cfg, err := filepath.Abs(filepath.Join("..", "deploy", "docker", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, t.TempDir(), nil, "serve", "-config", cfg, "-listen", "0.0.0.0:0", "-admin-listen", "0.0.0.0:0")
	port := p.adminAddr[strings.LastIndexByte(p.adminAddr, ':')+1:]
	if stdout, stderr, code := runBinary(t, "", "healthcheck", "-addr", "127.0.0.1:"+port, "-timeout", "3s"); code != 0 {
		t.Errorf("healthcheck: got exit code %d, want 0; stdout %q, stderr %q", code, stdout, stderr)
	}
	p.stop(t)
}

// TestServeBusyPort: a port in use ends serve with exit code 1 and a
// message naming the listener, its key and its flag.
func TestServeBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("mode: enforce\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runBinary(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0", "-admin-listen", addr)
	want := "admin listener on " + addr + " (admin_listen, flag -admin-listen): the address is already in use"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("serve with the admin port in use: got exit code %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}
