// Package redistest runs a real redis-server on a loopback port for tests
// (the fleet's shared store): started per test, killed with SIGKILL (as a
// crash would) and started again on the same port.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server process on a loopback port.
type Server struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts redis-server on a free loopback port, skipping the test
// with a message when the binary is absent (.ci/run installs the Debian
// package redis-server). The process is killed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("SKIPPED: redis-server not found in PATH; install the Debian package redis-server (.ci/run does)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &Server{t: t, port: port, dir: t.TempDir()}
	r.Restart()
	t.Cleanup(r.Kill)
	return r
}

// URL is the server's redis:// URL.
func (r *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d", r.port) }

// Restart runs the process (again, on the same port, without persistence)
// and waits until it answers PING, at most 10 s.
func (r *Server) Restart() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, err := r.Do("PING"); err == nil && out == "+PONG" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d: no PONG within 10s", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the process at once (SIGKILL), as a crash would; a no-op
// when it is not running.
func (r *Server) Kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// Do sends one inline command and returns the first reply line, without
// its line end.
func (r *Server) Do(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}
