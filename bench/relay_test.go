package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The environment that makes the test binary a delay relay (see
// startDelayProxy): the store's address and the delay.
const (
	relayTargetEnv = "ROBOTSPROXY_BENCH_RELAY_TARGET"
	relayDelayEnv  = "ROBOTSPROXY_BENCH_RELAY_DELAY"
)

// TestMain runs the delay relay when the benchmark started this binary as
// one, and the tests and benchmarks otherwise.
func TestMain(m *testing.M) {
	if target := os.Getenv(relayTargetEnv); target != "" {
		d, err := time.ParseDuration(os.Getenv(relayDelayEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "delay relay:", err)
			os.Exit(2)
		}
		if err := runRelay(target, d); err != nil {
			fmt.Fprintln(os.Stderr, "delay relay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// delayProxy is a TCP relay to a store that delays every segment towards
// it by a fixed time (in order, as a longer wire would), and counts those
// segments: one per command or pipeline a client writes. It runs in a
// process of its own (this test binary, started again), so that its
// timing neither takes the benchmark's Go scheduler from the proxies it
// measures nor waits for it; rtt measures what a round trip through it
// takes.
type delayProxy struct {
	listen, control string
}

// startDelayProxy starts the relay to target with delay d; it ends with
// the benchmark.
func startDelayProxy(b *testing.B, target string, d time.Duration) *delayProxy {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), relayTargetEnv+"="+target, relayDelayEnv+"="+d.String())
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	listen, control, ok := strings.Cut(strings.TrimSpace(line), " ")
	if err != nil || !ok {
		b.Fatalf("delay relay: no addresses (%q, %v)", line, err)
	}
	return &delayProxy{listen: listen, control: control}
}

func (p *delayProxy) addr() string { return p.listen }

// segments returns how many segments the relay has forwarded to the store.
func (p *delayProxy) segments(b *testing.B) int64 {
	c, err := net.Dial("tcp", p.control)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// segment is what a client wrote, due at the store at due; close, with no
// data, closes dst once the segments before it are written.
type segment struct {
	due   time.Time
	data  []byte
	dst   net.Conn
	close bool
}

// runRelay relays to target with delay d: it prints its listening and
// control addresses on one line, then serves until killed. Every
// connection's segments go through one queue, written by one OS thread
// that sleeps precisely (preciseSleeper) until each is due: the delay is
// the same for all, so the queue is in the order they are due. Replies go
// back at once.
func runRelay(target string, d time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n", ln.Addr(), ctl.Addr())
	var count atomic.Int64
	q := make(chan segment, 1<<16)
	go forward(q)
	go func() {
		for {
			c, err := ctl.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "%d\n", count.Load())
			c.Close()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go relayConn(c, target, d, q, &count)
	}
}

// relayConn relays one client connection c to a new connection to target.
func relayConn(c net.Conn, target string, d time.Duration, q chan<- segment, count *atomic.Int64) {
	s, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "delay relay:", err)
		c.Close()
		return
	}
	go func() { _, _ = io.Copy(c, s); c.Close() }() // the replies, at once
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			count.Add(1)
			q <- segment{due: time.Now().Add(d), data: append([]byte(nil), buf[:n]...), dst: s}
		}
		if err != nil {
			q <- segment{due: time.Now().Add(d), dst: s, close: true}
			return
		}
	}
}

// forward writes each segment of q when it is due (on an OS thread of its
// own, on Linux).
func forward(q <-chan segment) {
	sleep := preciseSleeper()
	for seg := range q {
		sleep(time.Until(seg.due))
		if seg.close {
			seg.dst.Close()
			continue
		}
		_, _ = seg.dst.Write(seg.data) // an error: the client's close follows
	}
}
