package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// redisProcess is a redis-server on a loopback port that the test can
// kill (SIGKILL, as a crash) and start again on the same port.
type redisProcess struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedisServer starts redis-server, skipping the test when the binary
// is absent (.ci/run installs the Debian package redis-server).
func startRedisServer(t *testing.T) *redisProcess {
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
	r := &redisProcess{t: t, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *redisProcess) url() string { return fmt.Sprintf("redis://127.0.0.1:%d", r.port) }

// start runs redis-server and waits for PONG.
func (r *redisProcess) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, "PING\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "+PONG") {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d: no PONG within 10s", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill ends the process at once.
func (r *redisProcess) kill() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
		r.cmd = nil
	}
}

// fleetOrigin serves a robots.txt that can change, counts the proxies'
// robots.txt fetches, and records when every other request arrived.
type fleetOrigin struct {
	srv     *httptest.Server
	fetches atomic.Int64

	mu       sync.Mutex
	robots   string
	maxAge   string // Cache-Control of robots.txt, "" for none
	delay    time.Duration
	arrivals []time.Time
}

func newFleetOrigin(t *testing.T, robots string) *fleetOrigin {
	o := &fleetOrigin{robots: robots}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		o.mu.Lock()
		body, cc, delay := o.robots, o.maxAge, o.delay
		if r.URL.Path != "/robots.txt" {
			o.arrivals = append(o.arrivals, now)
		}
		o.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			if strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
				o.fetches.Add(1)
			}
			time.Sleep(delay)
			if cc != "" {
				w.Header().Set("Cache-Control", cc)
			}
			_, _ = io.WriteString(w, body)
			return
		}
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// set changes robots.txt.
func (o *fleetOrigin) set(robots string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.robots = robots
}

// seen returns the arrival times of the requests other than robots.txt,
// in order.
func (o *fleetOrigin) seen() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.arrivals)
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}
