package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	"strings"
	"sync"
	"testing"
	"time"
)

// differentialAgents are the User-Agent headers the differential test
// decides for: two crawlers that corpus files name often, one that
// corpus files name by a name that is no RFC 9309 product token (the name
// rule), and one that falls back to "*".
var differentialAgents = []string{
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
	"ExampleBot/1.0",
}

const (
	// differentialPerFile caps the URLs generated per robots.txt file, so
	// that the whole corpus stays within a minute on two cores.
	differentialPerFile = 24
	// differentialChunk is how many origins run at once.
	differentialChunk = 64
)

// differentialCorpus returns the robots.txt files the differential test
// reads: $ROBOTSPROXY_CORPUS/robots, else ../testdata/robots; it skips the
// test when there are none.
func differentialCorpus(t *testing.T) []robotsFile {
	t.Helper()
	dir := filepath.Join("..", "testdata", "robots")
	if c := os.Getenv("ROBOTSPROXY_CORPUS"); c != "" {
		dir = filepath.Join(c, "robots")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("SKIPPED: no robots.txt corpus at %s (set ROBOTSPROXY_CORPUS): %v", dir, err)
	}
	var files []robotsFile
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, robotsFile{name: filepath.Join(dir, e.Name()), body: body})
	}
	if len(files) == 0 {
		t.Skipf("SKIPPED: no robots.txt files in %s", dir)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// pathVariants returns p and spellings of it that origins may resolve to
// it or near it: dot segments, "%2e", "%2F", "//", ";parameters", a query.
// Only spellings every client sends octet for octet are kept (sendable).
func pathVariants(p string) []string {
	vs := []string{p, "/x/.." + p, "/%2e%2e" + p, "/a/..%2F" + p[1:], "/" + p, p + "?q=1"}
	if i := strings.IndexByte(p[1:], '/'); i >= 0 {
		head, tail := p[:i+1], p[i+1:]
		vs = append(vs, head+";p"+tail, head+"%2F"+tail[1:], head+"/."+tail, head+"/%2e%2e/"+strings.TrimPrefix(head, "/")+tail)
	}
	var out []string
	for _, v := range vs {
		if sendable(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// differentialPaths returns the request paths of one file: its rules'
// literal prefixes with their variants, at most differentialPerFile,
// spread over the prefixes.
func differentialPaths(body []byte) []string {
	var all [][]string
	for _, p := range rulePaths(body, 6, 3) {
		all = append(all, pathVariants(p))
	}
	var out []string
	for round := 0; len(out) < differentialPerFile; round++ {
		added := false
		for _, vs := range all {
			if round < len(vs) && len(out) < differentialPerFile {
				out = append(out, vs[round])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// TestCheckMatchesProxy drives the real binary as a proxy and as "check"
// over every robots.txt file of the corpus, with URLs generated from each
// file's rules and their spellings, for a few crawlers: check must predict
// the proxy's verdict (200 or 403) for every URL.
func TestCheckMatchesProxy(t *testing.T) {
	files := differentialCorpus(t)
	logFile := filepath.Join(t.TempDir(), "audit.log")
	p := startProxy(t, fmt.Sprintf("shutdown_timeout: 10s\nlog:\n  file: %q\n", logFile))
	proxyURL := &url.URL{Scheme: "http", Host: p.proxyAddr}
	start := time.Now()
	fail := &failures{t: t}
	defer fail.done()
	requests, differ := 0, 0
	// Every origin gets an authority of its own: the proxy caches robots.txt
	// by authority, and a port the kernel hands out again after a chunk's
	// origins close would be answered with an earlier file's rules.
	used := map[string]bool{}
	for from := 0; from < len(files); from += differentialChunk {
		chunk := files[from:min(from+differentialChunk, len(files))]
		var cases []reqCase
		var closers []func()
		type run struct {
			file  robotsFile
			ua    string
			cases []int // indexes into cases
		}
		var runs []run
		for _, f := range chunk {
			o := newOriginUntil(f)
			for used[o.host] { // keep the reused port busy until the test ends
				t.Cleanup(o.srv.Close)
				o = newOriginUntil(f)
			}
			used[o.host] = true
			closers = append(closers, o.srv.Close)
			paths := differentialPaths(f.body)
			for _, ua := range differentialAgents {
				r := run{file: f, ua: ua}
				for _, path := range paths {
					r.cases = append(r.cases, len(cases))
					cases = append(cases, reqCase{origin: o, ua: ua, path: path})
				}
				runs = append(runs, r)
			}
		}
		res := goClient(proxyURL, cases)
		checked := make([][]bool, len(runs))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for i, r := range runs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				urls := make([]string, len(r.cases))
				for j, ci := range r.cases {
					urls[j] = cases[ci].url()
				}
				got, err := runCheck(r.file.name, r.ua, urls)
				if err != nil {
					fail.errorf("check %s %q: %v", r.file.name, r.ua, err)
					return
				}
				checked[i] = got
			}()
		}
		wg.Wait()
		for _, c := range closers {
			c()
		}
		for i, r := range runs {
			if checked[i] == nil {
				continue
			}
			for j, ci := range r.cases {
				c, got := cases[ci], res[ci]
				requests++
				proxyAllowed := got.status == http.StatusOK
				if got.err != nil || got.status != http.StatusOK && got.status != http.StatusForbidden || proxyAllowed != checked[i][j] {
					differ++
					fail.errorf("%s, %q, %s: proxy answered %d (%v), check says allowed %v",
						filepath.Base(r.file.name), c.ua, c.path, got.status, got.err, checked[i][j])
				}
			}
		}
	}
	t.Logf("%d robots.txt files, %d User-Agents, %d requests: %d differences between the proxy and check (%s)",
		len(files), len(differentialAgents), requests, differ, time.Since(start).Round(time.Millisecond))
}

// newOriginUntil is an origin serving f as its robots.txt and "ok" for
// every other path, which the caller closes (newOrigin closes at the end
// of the test: too late for hundreds of files).
func newOriginUntil(f robotsFile) *origin {
	o := &origin{file: f, hits: map[string]int{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(f.body)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	o.host = strings.TrimPrefix(o.srv.URL, "http://")
	return o
}

// runCheck runs "robotsproxy check -json FILE UA -" with urls on stdin and
// returns each URL's verdict.
func runCheck(file, ua string, urls []string) ([]bool, error) {
	cmd := exec.Command(binary, "check", "-json", file, ua, "-")
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 { // 1: some URL disallowed
			return nil, fmt.Errorf("%v: %s", err, stderr.String())
		}
	}
	var out []bool
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r struct {
			URL     string `json:"url"`
			Allowed bool   `json:"allowed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("check output %q: %w", sc.Text(), err)
		}
		if len(out) < len(urls) && r.URL != urls[len(out)] {
			return nil, fmt.Errorf("check output for %q, want %q", r.URL, urls[len(out)])
		}
		out = append(out, r.Allowed)
	}
	if len(out) != len(urls) {
		return nil, fmt.Errorf("check wrote %d results for %d URLs", len(out), len(urls))
	}
	return out, sc.Err()
}

// TestCheckReadings runs "check" and "check -rfc" through the binary on
// the paths the proxy denies under Disallow: /action/ although their
// spelling differs: check denies them and names the reading that decided;
// -rfc allows them and says it read the path as sent only.
func TestCheckReadings(t *testing.T) {
	robotsTxt := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robotsTxt, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	urls := []string{"http://example.com/index.html/../action/x", "http://example.com/%2e%2e/action/x",
		"http://example.com/a/..%2Faction/x", "http://example.com//action/x", "http://example.com/action;p/x"}
	stdout, stderr, code := runBinary(t, "", append([]string{"check", robotsTxt, "ExampleBot"}, urls...)...)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 1 || len(lines) != len(urls) {
		t.Fatalf("check: got exit code %d and %d lines, want 1 and %d:\n%s%s", code, len(lines), len(urls), stdout, stderr)
	}
	for i, l := range lines {
		if want := "DISALLOWED " + urls[i] + "\t"; !strings.HasPrefix(l, want) || !strings.HasSuffix(l, "\tpath_resolved /action/x") {
			t.Errorf("check: got %q, want it to start with %q and end with path_resolved /action/x", l, want)
		}
	}
	stdout, stderr, code = runBinary(t, "", append([]string{"check", "-rfc", robotsTxt, "ExampleBot"}, urls...)...)
	lines = strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) != len(urls) {
		t.Fatalf("check -rfc: got exit code %d and %d lines, want 0 and %d:\n%s%s", code, len(lines), len(urls), stdout, stderr)
	}
	for i, l := range lines {
		if want := "ALLOWED " + urls[i] + "\t"; !strings.HasPrefix(l, want) || !strings.Contains(l, "\treading rfc9309: the path as sent only") {
			t.Errorf("check -rfc: got %q, want it to start with %q and name the RFC 9309 reading", l, want)
		}
	}
}
