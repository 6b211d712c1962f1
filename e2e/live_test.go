package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// liveSite serves testdata/site (dl.acm.org's robots.txt: "*" disallows
// /action/ on line 3, GPTBot is disallowed / on line 30).
func liveSite(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "site"))))
	t.Cleanup(site.Close)
	return site
}

// proxyGet sends GET target through the proxy at addr as userAgent and
// returns the status.
func proxyGet(t *testing.T, addr, userAgent, target string) int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}, Timeout: 30 * time.Second}
	req, _ := http.NewRequest("GET", target, nil)
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The live page, in headless Chromium against the binary: rows appear as
// requests go through the proxy, a refusal with the robots.txt URL, the
// rule and its line; a filter applied shows its rows only; the page
// renders at a desktop and a phone width without a console message. Set
// LIVE_SCREENSHOT=FILE.png to keep the desktop screenshot (the manual's
// docs/live.png).
func TestLivePageInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser test of the live page")
	}
	site := liveSite(t)
	p := startProxy(t, "")
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.WindowSize(1280, 900))...)
	defer cancelAlloc()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(browser); err != nil { // starts the browser
		t.Fatal(err)
	}
	var console []string
	var consoleMu sync.Mutex
	go func() {
		for m, err := range chromedp.Console(browser) {
			if err != nil {
				return
			}
			consoleMu.Lock()
			console = append(console, m.String())
			consoleMu.Unlock()
		}
	}()
	ctx, cancelRun := context.WithTimeout(browser, 2*time.Minute)
	defer cancelRun()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+p.adminAddr+"/live")); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `document.getElementById('status').className === 'live'`, "the page's stream opens")

	ua := map[string]string{"ExampleBot": "ExampleBot/1.0", "GPTBot": "Mozilla/5.0 (compatible; GPTBot/1.0)"}
	sends := []struct {
		token, path string
		status      int
	}{
		{"ExampleBot", "/index.html", 200},
		{"ExampleBot", "/action/x", 403},
		{"GPTBot", "/index.html", 403},
		{"ExampleBot", "/robots.txt", 200},
	}
	for _, s := range sends {
		if got := proxyGet(t, p.proxyAddr, ua[s.token], site.URL+s.path); got != s.status {
			t.Fatalf("%s %s: status %d, want %d", s.token, s.path, got, s.status)
		}
	}
	waitPage(t, ctx, `document.querySelectorAll('#tbody tr.allow').length >= 2 && document.querySelectorAll('#tbody tr.deny').length >= 2`,
		"rows for the requests sent")
	rows := pageText(t, ctx, `#tbody`)
	robots := site.URL + "/robots.txt"
	for _, want := range []string{site.URL + "/action/x", robots + " line 3: Disallow: /action/", robots + " line 30: Disallow: /",
		"GPTBot", "ExampleBot", "user-agent", "no-matching-rule", "implicit-robots-txt"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the rows lack %q:\n%s", want, rows)
		}
	}
	waitPage(t, ctx, `['GPTBot', '127.0.0.1', 'rule'].every(w => document.getElementById('counts').innerText.includes(w))`,
		"the counts by token, host and reason")

	shots := t.TempDir()
	screenshot(t, ctx, 1280, filepath.Join(shots, "live-1280.png"), os.Getenv("LIVE_SCREENSHOT"))
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// A filter: GPTBot's decisions only, applied on the server.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("f-token"), "GPTBot"), chromedp.Click(chromedp.ID("apply"))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `location.search === '?token=GPTBot' && document.getElementById('status').className === 'live'`, "the filter applies")
	proxyGet(t, p.proxyAddr, ua["GPTBot"], site.URL+"/about.html")
	proxyGet(t, p.proxyAddr, ua["ExampleBot"], site.URL+"/action/y")
	waitPage(t, ctx, `[...document.querySelectorAll('#tbody td.url')].some(td => td.textContent.includes('/about.html'))`, "the filtered stream's new row")
	tokens := pageEval[[]string](t, ctx, `[...document.querySelectorAll('#tbody td.token')].map(td => td.firstChild.textContent)`)
	if len(tokens) != 2 {
		t.Errorf("filtered on GPTBot: %d rows (%q), want its 2 decisions", len(tokens), tokens)
	}
	for _, tok := range tokens {
		if tok != "GPTBot" {
			t.Errorf("filtered on GPTBot: a row of %q", tok)
		}
	}
	if strings.Contains(pageText(t, ctx, `#tbody`), "/action/y") {
		t.Error("filtered on GPTBot: ExampleBot's refusal is shown")
	}
	narrow := ""
	if keep := os.Getenv("LIVE_SCREENSHOT"); keep != "" {
		narrow = strings.TrimSuffix(keep, ".png") + "-420.png"
	}
	screenshot(t, ctx, 420, filepath.Join(shots, "live-420.png"), narrow)

	consoleMu.Lock()
	defer consoleMu.Unlock()
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
}

// waitPage waits up to 30 s until the JavaScript expression is true in
// the page (evaluated through DevTools, which the page's CSP does not
// govern).
func waitPage(t *testing.T, ctx context.Context, expr, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: not within 30s (%v); the page shows:\n%s", what, err, body)
		}
	}
}

func pageEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func pageText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return pageEval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).innerText`, sel))
}

// screenshot takes the page at width into file (and keep, when set),
// and checks it is not blank.
func screenshot(t *testing.T, ctx context.Context, width int64, file, keep string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the layout and the rows' fade settle
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, keep} {
		if f != "" {
			if err := os.WriteFile(f, shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if b.Dx() != int(width) || len(colours) < 8 {
		t.Errorf("screenshot at %d px: %d px wide, %d colours; want the page drawn", width, b.Dx(), len(colours))
	}
	t.Logf("screenshot at %d px: %s", width, file)
}

// watchProcess runs "robotsproxy watch ARGS" with its stdout on a pipe.
type watchProcess struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *syncBuffer
}

func startWatch(t *testing.T, args ...string) *watchProcess {
	t.Helper()
	w := &watchProcess{cmd: exec.Command(binary, append([]string{"watch"}, args...)...), lines: make(chan string, 1024), stderr: &syncBuffer{}}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); _ = w.cmd.Wait() })
	return w
}

// waitStderr waits up to 30 s for want on watch's standard error.
func (w *watchProcess) waitStderr(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(w.stderr.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("watch: no %q on stderr within 30s:\n%s", want, w.stderr)
		}
	}
}

func (w *watchProcess) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-w.lines:
		if !ok {
			t.Fatalf("watch ended; stderr:\n%s", w.stderr)
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("watch printed nothing within 30s; stderr:\n%s", w.stderr)
	}
	return ""
}

// watch on a pipe prints each decision's audit line exactly as the log
// has it, one a line, filtered on the server; the stream carries what the
// line carries and nothing more (no proxy credentials); Ctrl-C ends it
// with 130.
func TestWatchOverAPipe(t *testing.T) {
	site := liveSite(t)
	hash := hashPassword(t, "s3cret-pass")
	p := startProxy(t, "identity:\n  users:\n    - name: crawler1\n      password_bcrypt: \""+hash+"\"\n      token: ExampleBot\n")
	all := startWatch(t, "-admin", p.adminAddr, "-recent", "0")
	denies := startWatch(t, "-admin", p.adminAddr, "-decision", "deny", "-token", "examplebot", "-recent", "0")
	all.waitStderr(t, "watching every decision")
	denies.waitStderr(t, "watching decisions with token=examplebot decision=deny")

	proxy := &url.URL{Scheme: "http", Host: p.proxyAddr, User: url.UserPassword("crawler1", "s3cret-pass")}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	paths := []string{"/", "/action/x", "/about.html", "/action/y"}
	for _, path := range paths {
		resp, err := client.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	p.auditLines(t, len(paths))
	for i, want := range p.stdout.lines() {
		got := all.next(t)
		if got != want {
			t.Errorf("watch line %d:\n%s\nthe audit log's:\n%s", i, got, want)
		}
		for _, secret := range []string{"s3cret-pass", "Basic ", "Proxy-Authorization"} {
			if strings.Contains(got, secret) {
				t.Errorf("watch line %d carries %q: %s", i, secret, got)
			}
		}
	}
	for _, want := range []string{"/action/x", "/action/y"} {
		var l map[string]any
		if err := json.Unmarshal([]byte(denies.next(t)), &l); err != nil || !strings.HasSuffix(fmt.Sprint(l["url"]), want) || l["decision"] != "deny" || l["user"] != "crawler1" {
			t.Errorf("-decision deny -token examplebot: got %v (%v), want the refusal of %s", l, err, want)
		}
	}
	if err := denies.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := denies.cmd.Wait()
	if code := denies.cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("watch after Ctrl-C: %v, exit %d, want 130", err, code)
	}
	// An open stream does not hold up serve's graceful shutdown (10s).
	start := time.Now()
	p.stop(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("serve with a live stream open took %v to shut down", took)
	}
	all.waitStderr(t, "the stream broke")
}

// A subscriber that never reads does not hold up requests: they complete
// while its stream is stuck, it is dropped after live.write_timeout and
// the drop is counted in the metrics.
func TestLiveSubscriberThatNeverReadsThroughTheProxy(t *testing.T) {
	site := liveSite(t)
	p := startProxy(t, "live:\n  write_timeout: 1s\n")
	conn, err := net.Dial("tcp", p.adminAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /live/events HTTP/1.1\r\nHost: admin\r\n\r\n")
	waitMetric(t, p.adminAddr, "robotsproxy_live_subscribers 1")
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.proxyAddr}), MaxIdleConnsPerHost: 16}}
	long := "/action/" + strings.Repeat("x", 1500) // a longer line fills the stream sooner
	done := make(chan struct{})
	var sent int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				resp, err := client.Get(site.URL + long)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	waitMetric(t, p.adminAddr, "robotsproxy_live_subscribers_dropped_total 1")
	mu.Lock()
	atDrop := sent
	mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	close(done)
	wg.Wait()
	t.Logf("%d requests before the drop, %d in all", atDrop, sent)
	if sent <= atDrop {
		t.Errorf("no request completed after the drop")
	}
	waitMetric(t, p.adminAddr, "robotsproxy_live_subscribers 0")
}

// waitMetric waits up to 60 s for a line of /metrics.
func waitMetric(t *testing.T, admin, line string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + admin + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains("\n"+string(b), "\n"+line+"\n") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics: no %q within 60s", line)
		}
	}
}
