package main

import (
	"encoding/json"
	"fmt"
	"net"
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

	"github.com/robotsproxy/robotsproxy/internal/audit/audittest"
)

// TestSignalsEndEveryCommand runs the real binary for every command, sends
// SIGINT or SIGTERM while it works or waits, and checks that it ends
// within a second: serve with 0 after its graceful shutdown, every other
// command with 130 (SIGINT) or 143 (SIGTERM). Commands that finish at once
// (ca init, keys init, keys directory, audit show, version) may finish
// before the signal: then with their own code.
func TestSignalsEndEveryCommand(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	robots := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(robots, []byte("User-agent: *\nDisallow: /action/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "log.fifo") // opening it waits for a writer
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	archive, _, sha := audittest.ChainedLog(t)
	tests := []struct {
		name  string
		args  []string
		stdin string // "" with an open pipe: the command waits on it
		serve bool   // exits 0 after a graceful shutdown
		quick bool   // may finish before the signal
	}{
		{name: "serve", args: []string{"serve", "-config", empty, "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, serve: true},
		{name: "check waiting on stdin", args: []string{"check", robots, "ExampleBot", "-"}},
		{name: "hash-password hashing", args: []string{"hash-password", "-cost", "31"}, stdin: "secret\n"},
		{name: "hash-password waiting on stdin", args: []string{"hash-password"}},
		{name: "healthcheck waiting for an answer", args: []string{"healthcheck", "-addr", silent.Addr().String(), "-timeout", "1m"}},
		{name: "watch waiting for the stream", args: []string{"watch", "-admin", silent.Addr().String()}},
		{name: "audit report waiting on stdin", args: []string{"audit", "report", "-"}},
		{name: "audit verify opening a FIFO", args: []string{"audit", "verify", "-chain-only", fifo}},
		{name: "audit access-log waiting on stdin", args: []string{"audit", "access-log", "-robots", robots, "-"}},
		{name: "ca show", args: []string{"ca", "show", "-data-dir", filepath.Join(dir, "state")}, quick: true},
		{name: "audit show", args: []string{"audit", "show", "-archive", archive, sha}, quick: true},
		{name: "ca init", args: []string{"ca", "init", "-cert", filepath.Join(dir, "ca.pem"), "-key", filepath.Join(dir, "ca.key")}, quick: true},
		{name: "keys init", args: []string{"keys", "init", filepath.Join(dir, "keys")}, quick: true},
		{name: "keys directory", args: []string{"keys", "directory", "-config", empty, "-o", filepath.Join(dir, "www")}, quick: true},
		{name: "version", args: []string{"version"}, quick: true},
	}
	for _, tt := range tests {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tt.name+"/"+sig.String(), func(t *testing.T) {
				cmd := exec.Command(bin, tt.args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "HOME="+t.TempDir())
				var stdout, stderr syncBuffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				w := startWithStdin(t, cmd, tt.stdin)
				defer w.Close()
				exited := make(chan struct{})
				go func() { cmd.Wait(); close(exited) }()
				defer func() {
					select {
					case <-exited:
					default:
						cmd.Process.Kill()
						<-exited
					}
				}()
				if tt.serve {
					waitFor(t, &stderr, `"message":"started"`, exited)
				} else {
					time.Sleep(500 * time.Millisecond) // past the start, into the work or the wait
				}
				sent := time.Now()
				cmd.Process.Signal(sig)
				select {
				case <-exited:
				case <-time.After(time.Second):
					t.Fatalf("robotsproxy %q still running 1s after %v; stderr:\n%s", tt.args, sig, stderr.String())
				}
				took := time.Since(sent)
				code := cmd.ProcessState.ExitCode()
				want := 128 + int(sig)
				if tt.serve {
					want = 0
				}
				if code != want && !(tt.quick && code != -1) {
					t.Errorf("robotsproxy %q after %v: exit code %d (%v), want %d; stderr:\n%s", tt.args, sig, code, cmd.ProcessState, want, stderr.String())
				}
				noPanic(t, tt.args, binaryResult{stdout.String(), stderr.String(), code})
				t.Logf("exit %d %v after %v", code, took.Round(time.Millisecond), sig)
			})
		}
	}
}

// startWithStdin starts cmd with stdin on a pipe that holds text and stays
// open, and returns the pipe's write end.
func startWithStdin(t *testing.T, cmd *exec.Cmd, text string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := w.WriteString(text); err != nil {
		t.Fatal(err)
	}
	return w
}

// waitFor waits up to 30 s for want in out (written by a running process)
// or fails the test when the process exits first.
func waitFor(t *testing.T, out fmt.Stringer, want string, exited <-chan struct{}) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case <-exited:
			t.Fatalf("exited before printing %q:\n%s", want, out.String())
		case <-deadline:
			t.Fatalf("no %q after 30s:\n%s", want, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestServeSecondSignalEndsItAtOnce: while serve drains a request in
// flight (shutdown_timeout 30s), it keeps running after the first SIGTERM,
// and a second one ends it within a second with 143.
func TestServeSecondSignalEndsItAtOnce(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r) // unavailable: allow all
			return
		}
		arrived <- struct{}{}
		<-release
	}))
	defer origin.Close()
	defer close(release) // before origin.Close, which waits for the handler
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("shutdown_timeout: 30s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testBinary(t), "serve", "-config", cfg, "-allow-private", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "HOME="+t.TempDir())
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	waitFor(t, &stderr, `"message":"started"`, exited)
	var proxyAddr string
	for _, line := range strings.Split(stderr.String(), "\n") {
		var l struct{ Message, Listener, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "listening" && l.Listener == "proxy" {
			proxyAddr = l.Addr
		}
	}
	proxy, _ := url.Parse("http://" + proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	go func() {
		req, _ := http.NewRequest(http.MethodGet, origin.URL+"/slow", nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("the request never reached the origin; stderr:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		t.Fatalf("serve exited at the first SIGTERM with a request in flight (exit %d): want it to drain", cmd.ProcessState.ExitCode())
	case <-time.After(500 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(time.Second):
		t.Fatalf("serve still running 1s after a second SIGTERM; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(stderr.String(), "serve: SIGTERM again: not waiting for the shutdown") {
		t.Errorf("serve after a second SIGTERM: exit %d, want 143 and a note; stderr:\n%s", code, stderr.String())
	}
}
