//go:build linux

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchOnATerminal runs watch against a running serve with its
// standard output on a pseudo-terminal: one line per decision, in colour
// (red for a refusal, with the robots.txt rule and its line; green for an
// allowed request), and Ctrl-C ends it with 130.
func TestWatchOnATerminal(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /action/\n"))
			return
		}
		_, _ = w.Write([]byte("hello\n"))
	}))
	defer origin.Close()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(testBinary(t), "serve", "-config", empty, "-allow-private", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0")
	serve.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "HOME="+t.TempDir())
	var stdout, stderr syncBuffer
	serve.Stdout, serve.Stderr = &stdout, &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { serve.Wait(); close(served) }()
	defer func() { serve.Process.Kill(); <-served }()
	waitFor(t, &stderr, `"message":"started"`, served)
	addrs := map[string]string{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		var l struct{ Message, Listener, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "listening" {
			addrs[l.Listener] = l.Addr
		}
	}

	p := openPTY(t)
	watch := exec.Command(testBinary(t), "watch", "-admin", addrs["admin"])
	watch.Stdin, watch.Stdout, watch.Stderr = p.slave, p.slave, p.slave
	watch.Env = append(os.Environ(), "NO_COLOR=")
	watch.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { watch.Wait(); close(exited) }()
	defer func() { watch.Process.Kill(); <-exited }()
	p.waitShown(t, "watching every decision", 1)

	proxy, _ := url.Parse("http://" + addrs["proxy"])
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	for _, path := range []string{"/index.html", "/action/x"} {
		req, _ := http.NewRequest(http.MethodGet, origin.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	p.waitShown(t, origin.URL+"/robots.txt line 2: Disallow: /action/", 1)
	shown := p.shown()
	for _, want := range []string{"\x1b[32mallow\x1b[0m 200 \x1b[1mExampleBot\x1b[0m GET " + origin.URL + "/index.html no-matching-rule",
		"\x1b[31mdeny \x1b[0m 403 \x1b[1mExampleBot\x1b[0m GET " + origin.URL + "/action/x rule: "} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal shows %q\nwant %q", shown, want)
		}
	}
	if strings.Contains(shown, `"decision"`) {
		t.Errorf("watch printed JSON on a terminal: %q", shown)
	}
	watch.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(time.Second):
		t.Fatalf("watch still running 1s after SIGINT")
	}
	if code := watch.ProcessState.ExitCode(); code != 130 {
		t.Errorf("watch after SIGINT: exit %d, want 130", code)
	}
}
