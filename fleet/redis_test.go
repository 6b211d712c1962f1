package fleet

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/robots"
)

// redisServer is a redis-server process on a loopback port, for tests.
type redisServer struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts redis-server on a free loopback port, skipping the
// test when the binary is absent; it is killed at the end of the test.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("SKIPPED: redis-server not found in PATH (Debian package redis-server; .ci/run installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisServer{t: t, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.kill)
	return r
}

// url is the server's redis:// URL.
func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d", r.port) }

// start runs the process and waits until it answers PING.
func (r *redisServer) start() {
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
		if out, err := r.do("PING"); err == nil && out == "+PONG" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d: no PONG within 10s", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill stops the process at once (SIGKILL), as a crash would.
func (r *redisServer) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// do sends one inline command and returns the first reply line.
func (r *redisServer) do(cmd string) (string, error) {
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

// syncLog is a zerolog destination safe for concurrent use.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), msg)
}

// replica is one Store as a proxy replica holds it, with its own metrics
// and log.
type replica struct {
	*Store
	reg *prometheus.Registry
	log *syncLog
}

// newReplica connects a Store to url with small test TTLs; change edits
// the options first.
func newReplica(t *testing.T, url string, change func(*Options)) *replica {
	t.Helper()
	r := &replica{reg: prometheus.NewRegistry(), log: &syncLog{}}
	o := Options{URL: url, KeyPrefix: "test:", WaitFor: 2 * time.Second, LockTTL: 3 * time.Second,
		MinTTL: 0, MaxTTL: time.Hour, UnreachableRetry: time.Minute,
		Parse: robots.Options{}, Registerer: r.reg, Log: zerolog.New(r.log)}
	if change != nil {
		change(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.Store = s
	return r
}

// counter returns the value of a metric of the store: "up", "hits",
// "misses", "lock_waits", "errors/OP" or "fallbacks/WHAT".
func (r *replica) counter(name string) float64 {
	family, label, _ := strings.Cut(name, "/")
	full := map[string]string{"up": "robotsproxy_shared_up", "hits": "robotsproxy_shared_hits_total",
		"misses": "robotsproxy_shared_misses_total", "lock_waits": "robotsproxy_shared_lock_waits_total",
		"errors": "robotsproxy_shared_errors_total", "fallbacks": "robotsproxy_shared_fallbacks_total"}[family]
	mfs, err := r.reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != full {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	panic("no metric " + name)
}

// flush empties the store.
func flush(t *testing.T, s *Store) {
	t.Helper()
	if err := s.rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
