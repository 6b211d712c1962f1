// Package redistest runs a real redis-server on a loopback port for tests
// (the fleet's shared store): started per test, killed with SIGKILL (as a
// crash would) and started again on the same port.
package redistest

import (
	"bufio"
	"fmt"
	"io"
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
	args []string // more redis-server arguments
}

// Start starts redis-server on a free loopback port, skipping the test
// with a message when the binary is absent (.ci/run installs the Debian
// package redis-server). The process is killed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t)
}

func start(t testing.TB, args ...string) *Server {
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
	r := &Server{t: t, port: port, dir: t.TempDir(), args: args}
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
	r.cmd = exec.Command("redis-server", append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir}, r.args...)...)
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

// StartCluster starts a Redis Cluster of n primaries (no replicas) on
// loopback ports, the hash slots split evenly between them, and waits
// until every node reports cluster_state:ok, at most 10 s. It returns the
// nodes and the cluster's redis+cluster:// URL. The processes are killed
// when the test ends.
func StartCluster(t testing.TB, n int) ([]*Server, string) {
	t.Helper()
	nodes := make([]*Server, n)
	for i := range nodes {
		nodes[i] = start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
	}
	const slots = 16384
	for i, nd := range nodes {
		cmd := fmt.Sprintf("CLUSTER ADDSLOTSRANGE %d %d", i*slots/n, (i+1)*slots/n-1)
		if out, err := nd.Do(cmd); err != nil || out != "+OK" {
			t.Fatalf("%s on port %d: %q %v", cmd, nd.port, out, err)
		}
		if i > 0 {
			if out, err := nodes[0].Do(fmt.Sprintf("CLUSTER MEET 127.0.0.1 %d", nd.port)); err != nil || out != "+OK" {
				t.Fatalf("CLUSTER MEET %d: %q %v", nd.port, out, err)
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, nd := range nodes {
		for {
			info, err := nd.bulk("CLUSTER INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis cluster: node on port %d not ok within 10s: %q %v", nd.port, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	u := fmt.Sprintf("redis+cluster://127.0.0.1:%d", nodes[0].port)
	for i, nd := range nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += fmt.Sprintf("%saddr=127.0.0.1:%d", sep, nd.port)
	}
	return nodes, u
}

// bulk sends one inline command whose reply is a bulk string and returns
// that string.
func (r *Server) bulk(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimRight(line, "\r\n"), "$"))
	if err != nil || n < 0 {
		return "", fmt.Errorf("%s: reply %q is no bulk string", cmd, line)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}
