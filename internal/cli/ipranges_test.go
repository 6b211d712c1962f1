package cli

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/accesslog"
)

// jafarRanges is a JAFAR file (draft-illyes-webbotauth-jafar-00): a
// formatVersion, a synctoken, a prefix tagged with its service.
const jafarRanges = `{"formatVersion": "1.0", "synctoken": "1764300000", "creationTime": "2026-11-20T00:00:00Z",
 "notes": "ranges of Anthropic's crawlers (a test file)",
 "prefixes": [{"ipv4Prefix": "216.73.216.0/22"}, {"ipv4Prefix": "160.79.104.0/23", "services": ["Claude-User"]}]}`

// publish serves ranges files by path; other paths are 404.
func publish(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipranges", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ipranges update, run as typed against local servers publishing each
// supported format (Google's, JAFAR, a plain list), stores every source
// with its provenance; audit access-log -ip-ranges auto then verifies
// against the stored copies and states, per token, their file, URL,
// creationTime and prefix count, in text, json and html.
func TestIPRangesUpdateThenAuto(t *testing.T) {
	pub := publish(t, map[string]string{
		"/common-crawlers.json": readFixture(t, "googlebot-fixture.json"),
		"/ccbot.json":           readFixture(t, "ccbot-fixture.json"),
		"/bots.json":            jafarRanges,
		"/gptbot.txt":           "# GPTBot, a plain list\n20.171.206.0/24\n52.230.152.0/24\n",
	})
	dataDir := t.TempDir()
	update := []string{"ipranges", "update", "-data-dir", dataDir, "-allow-private",
		"-source", "google-common-crawlers=" + pub.URL + "/common-crawlers.json", "-source", "commoncrawl-ccbot=" + pub.URL + "/ccbot.json",
		"-source", "anthropic=" + pub.URL + "/bots.json", "-source", "openai-gptbot=" + pub.URL + "/gptbot.txt",
		"google-common-crawlers", "commoncrawl-ccbot", "anthropic", "openai-gptbot"}
	var stdout, stderr bytes.Buffer
	if code := exitCode(run(t.Context(), update, strings.NewReader(""), &stdout, &stderr), &stderr); code != 0 {
		t.Fatalf("update: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"google-common-crawlers  updated  7         2023-09-26T22:00:50Z", "commoncrawl-ccbot       updated  5         2026-08-11T13:40:00Z",
		"anthropic               updated  2         2026-11-20T00:00:00Z", "openai-gptbot           updated  2         -"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("update: no %q in\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := exitCode(run(t.Context(), []string{"ipranges", "show", "-data-dir", dataDir}, nil, &stdout, &stderr), &stderr); code != 0 ||
		!strings.Contains(stdout.String(), pub.URL+"/ccbot.json") || strings.Count(stdout.String(), "\n") != 5 {
		t.Errorf("show: exit %d\n%s", code, stdout.String())
	}

	robots := filepath.Join(t.TempDir(), "robots.txt")
	os.WriteFile(robots, []byte("User-agent: *\nDisallow: /private/\n"), 0o644)
	log := `66.249.79.230 - - [20/Nov/2026:10:00:00 +0000] "GET /private/a HTTP/1.1" 200 1 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
203.0.113.9 - - [20/Nov/2026:10:00:01 +0000] "GET /private/b HTTP/1.1" 200 1 "-" "CCBot/2.0 (https://commoncrawl.org/faq/)"
160.79.104.9 - - [20/Nov/2026:10:00:02 +0000] "GET /private/c HTTP/1.1" 200 1 "-" "Mozilla/5.0 (compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
20.171.206.7 - - [20/Nov/2026:10:00:03 +0000] "GET /private/d HTTP/1.1" 200 1 "-" "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"
`
	outputs := map[string]string{}
	for _, format := range []string{"text", "json", "html"} {
		stdout.Reset()
		args := []string{"audit", "access-log", "-robots", robots, "-ip-ranges", "auto", "-data-dir", dataDir, "-format", format, "-"}
		if code := exitCode(run(t.Context(), args, strings.NewReader(log), &stdout, &stderr), &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr.String())
		}
		outputs[format] = html.UnescapeString(stdout.String())
	}
	var res accesslog.Result
	if err := json.Unmarshal([]byte(outputs["json"]), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]accesslog.TokenRanges{}
	for _, tr := range res.Summary.IPRanges {
		got[tr.Token] = tr
	}
	want := map[string]struct {
		source, url, created string
		prefixes             int
		inside               int64
	}{
		"Googlebot":   {"google-common-crawlers-", pub.URL + "/common-crawlers.json", "2023-09-26T22:00:50Z", 7, 1},
		"CCBot":       {"commoncrawl-ccbot-", pub.URL + "/ccbot.json", "2026-08-11T13:40:00Z", 5, 0},
		"Claude-User": {"anthropic-", pub.URL + "/bots.json", "2026-11-20T00:00:00Z", 2, 1},
		"GPTBot":      {"openai-gptbot-", pub.URL + "/gptbot.txt", "", 2, 1},
	}
	if len(got) != len(want) {
		t.Errorf("ranges of %d tokens: %+v", len(got), res.Summary.IPRanges)
	}
	for tok, w := range want {
		tr := got[tok]
		if len(tr.Sources) != 1 || tr.Requests != 1 || tr.Inside != w.inside {
			t.Errorf("%s: %+v", tok, tr)
			continue
		}
		s := tr.Sources[0]
		created := ""
		if s.CreationTime != nil {
			created = s.CreationTime.Format("2006-01-02T15:04:05Z07:00")
		}
		if !strings.HasPrefix(filepath.Base(s.Source), w.source) || filepath.Dir(s.Source) != filepath.Join(dataDir, "ipranges") || s.URL != w.url ||
			created != w.created || s.Prefixes != w.prefixes || s.FetchedAt == nil {
			t.Errorf("%s: source %+v", tok, s)
		}
		for _, format := range []string{"text", "html"} {
			if !strings.Contains(outputs[format], s.Source) || !strings.Contains(outputs[format], w.url) || !strings.Contains(outputs[format], w.created) {
				t.Errorf("%s: %s does not state %s, %s, %s", tok, format, s.Source, w.url, w.created)
			}
		}
	}
	if len(res.Impostors) != 1 || res.Impostors[0].ProductToken != "CCBot" || len(res.Violations) != 3 {
		t.Errorf("impostors %+v, violations %d", res.Impostors, len(res.Violations))
	}
}

// A source that fails fails alone and is reported (exit 1), the others
// stored; the proxy's destination guard refuses loopback unless
// -allow-private; an unknown source name is a usage error; -ip-ranges
// auto with nothing stored says to run ipranges update.
func TestIPRangesUpdateFailures(t *testing.T) {
	pub := publish(t, map[string]string{"/bingbot.json": readFixture(t, "bingbot-fixture.json"), "/page.html": "<html>moved</html>"})
	dataDir := t.TempDir()
	tests := []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"-allow-private", "-source", "bing=" + pub.URL + "/bingbot.json", "-source", "openai-gptbot=" + pub.URL + "/missing.json", "bing", "openai-gptbot"}, 1,
			"bing           updated", "openai-gptbot: fetch " + pub.URL + "/missing.json: unavailable (status 404)"},
		{[]string{"-allow-private", "-source", "apple-applebot=" + pub.URL + "/page.html", "apple-applebot"}, 1, "apple-applebot  FAILED", "an HTML or XML page"},
		{[]string{"-source", "apple-applebot=" + pub.URL + "/bingbot.json", "apple-applebot"}, 1, "FAILED", "destination address refused"},
		{[]string{"-allow-private", "-source", "bing=" + pub.URL + "/bingbot.json", "bing"}, 0, "bing    fresh", ""},
		{[]string{"bingo"}, 2, "", `source "bingo": unknown; the sources are google-common-crawlers`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		args := append([]string{"ipranges", "update", "-data-dir", dataDir}, tt.args...)
		code := exitCode(run(t.Context(), args, strings.NewReader(""), &stdout, &stderr), &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.errs) {
			t.Errorf("%q: exit %d\n%s%s\nwant %d, %q, %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.errs)
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"audit", "access-log", "-robots", filepath.Join("..", "..", "testdata", "site", "robots.txt"), "-ip-ranges", "auto", "-data-dir", t.TempDir(), "-"}
	if code := exitCode(run(t.Context(), args, strings.NewReader(""), &stdout, &stderr), &stderr); code != 2 || !strings.Contains(stderr.String(), "run robotsproxy ipranges update") {
		t.Errorf("auto with nothing stored: exit %d, %s", code, stderr.String())
	}
}
