package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	archive, _, sha := verifyFixture(t)
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
		{name: "audit report waiting on stdin", args: []string{"audit", "report", "-"}},
		{name: "audit verify opening a FIFO", args: []string{"audit", "verify", "-chain-only", fifo}},
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
