package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/enforce"
	"github.com/robotsproxy/robotsproxy/internal/accesslog"
	"github.com/robotsproxy/robotsproxy/internal/dnstest"
)

func TestRunAuditAccessLogErrors(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	log := filepath.Join(dir, "access.log")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /p\n"), 0o644)
	os.WriteFile(log, []byte(`1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "B/1"`+"\n"), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"prefixes":[]}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"audit", "access-log", "-robots", robots}, "want at least one LOG"},
		{[]string{"audit", "access-log", log}, "want -robots PATH"},
		{[]string{"audit", "access-log", "-robots", robots, "-format", "xml", log}, `-format "xml"`},
		{[]string{"audit", "access-log", "-robots", robots, "-log-format", "w3c", log}, `-log-format "w3c"`},
		{[]string{"audit", "access-log", "-robots", robots, "-json-fields", "client=ip", log}, "only with -log-format json"},
		{[]string{"audit", "access-log", "-robots", robots, "-ip-ranges", "Googlebot", log}, "want auto, TOKEN=FILE or TOKEN=URL"},
		{[]string{"audit", "access-log", "-robots", robots, "-ip-ranges", "Googlebot=http://127.0.0.1:1/googlebot.json", log}, "unreachable"},
		{[]string{"audit", "access-log", "-robots", robots, "-ip-ranges", "Googlebot=" + bad, log}, "no prefix"},
		{[]string{"audit", "access-log", "-robots", robots, "-dns", "localhost", log}, "want HOST:PORT"},
		{[]string{"audit", "access-log", "-robots", filepath.Join(dir, "none"), log}, "no such file"},
		{[]string{"audit", "access-log", "-robots", robots, filepath.Join(dir, "none.log")}, "no such file"},
		{[]string{"audit", "access-log", "-robots", robots, "-o", dir, log}, "not a regular file"},
		{[]string{"audit", "access-log", "-robots", robots, "-table", "crawlers", log}, "with -format csv"},
		{[]string{"audit", "access-log", "-robots", robots, "-format", "csv", "-table", "hosts", log}, `-table "hosts"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), tt.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

func TestRunAuditAccessLogOutput(t *testing.T) {
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /p\n"), 0o644)
	log := `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "B/1"` + "\n"
	out := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"audit", "access-log", "-robots", robots, "-format", "html", "-o", out, "-"}, strings.NewReader(log), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "Disallow: /p") || stdout.Len() != 0 {
		t.Errorf("report %q, %v; stdout %q", b, err, stdout.String())
	}
	stdout.Reset()
	jl := `{"remote_addr":"1.2.3.4","time_iso8601":"2026-11-20T10:00:00+00:00","request":"GET /p HTTP/1.1","status":200,"http_user_agent":"B/1"}` + "\n"
	err = run(t.Context(), []string{"audit", "access-log", "-log-format", "json", "-robots", robots, "-format", "csv", "-"}, strings.NewReader(jl), &stdout, &stderr)
	if err != nil || !strings.HasPrefix(stdout.String(), "kind,file,line,") || !strings.Contains(stdout.String(), "violation,-,1,2026-11-20T10:00:00Z,1.2.3.4,GET,/p,200,B/1,B,,Disallow: /p,2") {
		t.Errorf("%v: %s", err, stdout.String())
	}
	stdout.Reset()
	err = run(t.Context(), []string{"audit", "access-log", "-robots", robots, "-format", "csv", "-table", "crawlers", "-"}, strings.NewReader(log), &stdout, &stderr)
	if want := "product_token,requests,verified,unverified,impostor,robots_fetches,violations,disputable,class,catalogue,ranges_source,ranges_creation_time,ranges_prefixes,warnings\nB,1,0,0,0,0,1,0,other,crawler-user-agents@"; err != nil || !strings.HasPrefix(stdout.String(), want) || !strings.HasSuffix(stdout.String(), ",,,,\n") {
		t.Errorf("%v: %q, want %q", err, stdout.String(), want)
	}
}

// -ip-ranges and -dns together, as typed: an address outside Google's
// published ranges that reverse DNS confirms is verified; one whose PTR
// name does not resolve back is an impostor.
func TestRunAuditAccessLogDNS(t *testing.T) {
	dns := dnstest.Server(t, dnstest.Zone{
		PTR: map[string]string{
			"1.66.249.66.in-addr.arpa.":  "crawl-66-249-66-1.googlebot.com.",
			"10.113.0.203.in-addr.arpa.": "spoof.googlebot.com.",
		},
		A: map[string]string{"crawl-66-249-66-1.googlebot.com.": "66.249.66.1", "spoof.googlebot.com.": "198.51.100.1"},
	})
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /p\n"), 0o644)
	ua := "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	log := `66.249.66.1 - - [20/Nov/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "` + ua + `"` + "\n" +
		`203.0.113.10 - - [20/Nov/2026:10:00:01 +0000] "GET /p HTTP/1.1" 200 1 "-" "` + ua + `"` + "\n" +
		`66.249.79.230 - - [20/Nov/2026:10:00:02 +0000] "GET /p HTTP/1.1" 200 1 "-" "` + ua + `"` + "\n"
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"audit", "access-log", "-robots", robots, "-ip-ranges", "Googlebot=" + filepath.Join("..", "..", "testdata", "ipranges", "googlebot-fixture.json"),
		"-dns", dns, "-format", "json", "-"}, strings.NewReader(log), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var res accesslog.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 2 || res.Violations[0].Identity != "verified" || res.Violations[1].Identity != "verified" || res.Violations[1].Line != 3 ||
		len(res.Impostors) != 1 || res.Impostors[0].Line != 2 || res.Impostors[0].Identity != "impostor" {
		t.Errorf("violations %+v\nimpostors %+v", res.Violations, res.Impostors)
	}
}

// -ip-ranges TOKEN=URL fetches the file with the proxy's fetcher: a
// loopback origin only with -allow-private, a 404 is an error.
func TestRunAuditAccessLogRangesURL(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipranges", "googlebot-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/googlebot.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer origin.Close()
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /p\n"), 0o644)
	ua := "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	log := `66.249.79.230 - - [20/Nov/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 1 "-" "` + ua + `"` + "\n" +
		`203.0.113.10 - - [20/Nov/2026:10:00:01 +0000] "GET /p HTTP/1.1" 200 1 "-" "` + ua + `"` + "\n"
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-allow-private", "-ip-ranges", "Googlebot=" + origin.URL + "/googlebot.json"}, 0, `"impostors":[{"file":"-","line":2`},
		{[]string{"-ip-ranges", "Googlebot=" + origin.URL + "/googlebot.json"}, 2, "destination"},
		{[]string{"-allow-private", "-ip-ranges", "Googlebot=" + origin.URL + "/missing.json"}, 2, "status 404"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"audit", "access-log", "-robots", robots, "-format", "json"}, tt.args...), "-")
		err := run(t.Context(), args, strings.NewReader(log), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stdout %.300s, stderr %s; want %d and %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.want)
		}
	}
}

// proxyAuditLog writes the audit lines the proxy itself writes for a few
// requests to a file, and returns its path.
func proxyAuditLog(t *testing.T) string {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
			return
		}
		w.Write([]byte("hello"))
	}))
	defer origin.Close()
	cfg := enforce.DefaultConfig()
	cfg.AllowPrivate = true
	var audit bytes.Buffer
	tr, err := enforce.New(enforce.Options{Config: cfg, Audit: &audit})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/private/x", "/a"} {
		req, _ := http.NewRequest("GET", origin.URL+p, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	tr.Close()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, audit.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Wrong input is loud: a log not in the chosen format, a misspelt
// -ip-ranges token (exit 2, naming what it looks like or the nearest
// name); a robots.txt that is not text, an empty log, a skipped line
// (exit 0, said on stderr and in the report).
func TestRunAuditAccessLogBadInputIsLoud(t *testing.T) {
	dir := t.TempDir()
	apache := filepath.Join("..", "..", "testdata", "accesslog", "apache_logs.gz")
	site := filepath.Join("..", "..", "testdata", "site", "robots.txt")
	gzipped := filepath.Join("..", "..", "testdata", "robots-odd", "schema.org.txt")
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	elf, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "robots.txt") // a binary file given as -robots: the start of the test's own executable
	os.WriteFile(binary, elf[:64<<10], 0o644)
	tests := []struct {
		name         string
		args         []string
		code         int
		stderr, text string
	}{
		{"the proxy's own audit log as combined", []string{"-robots", site, proxyAuditLog(t)}, 2,
			"3 of its first 3 lines do not parse as combined (line 1: malformed: no client address); they look like robotsproxy audit lines, the proxy's own log: summarise it with robotsproxy audit report", ""},
		{"an Apache log as json", []string{"-log-format", "json", "-robots", site, apache}, 2,
			"100 of its first 100 lines do not parse as json (line 1: malformed: invalid character '.' after top-level value); they look like the Combined Log Format: give -log-format combined", ""},
		{"a misspelt token", []string{"-robots", site, "-ip-ranges", "Googlbot=" + filepath.Join("..", "..", "testdata", "ipranges", "googlebot-fixture.json"), apache}, 2,
			"-ip-ranges Googlbot=...: no crawler of that name is known or in the logs; did you mean Googlebot?", ""},
		{"a gzipped robots.txt", []string{"-robots", gzipped, apache}, 0,
			"warning: robots.txt version " + gzipped + " is not text (gzip-compressed data)", "is not text (gzip-compressed data)"},
		{"a binary robots.txt", []string{"-robots", binary, apache}, 0,
			"warning: robots.txt version " + binary + " is not text (binary data (NUL octets))", "is not text (binary data (NUL octets))"},
		{"an empty log", []string{"-robots", site, empty}, 0, "warning: no request was read: the logs hold 0 lines", "period               none: no request was read"},
		{"a skipped line", []string{"-robots", site, apache}, 0, "", "skipped lines (all 1; -format json lists every one)\n" + apache + ":8899 malformed: unterminated User-Agent\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), append([]string{"audit", "access-log"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
		code := exitCode(err, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) || !strings.Contains(stdout.String(), tt.text) || tt.code == 2 && stdout.Len() > 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %.2000s; want %d, %q and %q", tt.name, code, stderr.String(), stdout.String(), tt.code, tt.stderr, tt.text)
		}
	}
}
