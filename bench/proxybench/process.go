package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/cpubench"
)

// process is a proxy running in a process of its own.
type process struct {
	kind string // robotsproxy, bare, smokescreen, squid
	cmd  *exec.Cmd
	pid  int    // the proxy's process (not a wrapper's)
	addr string // where it listens, host:port
	done chan struct{}
}

// startProcess starts args (with env added to the environment), the
// proxy of kind, in dir, its output copied to dir/KIND.out. Its address
// is known, when the caller chose it (waiting for it to listen is then
// the caller's), or found by addr in its standard output and error (each
// line is offered to it).
func startProcess(kind string, args, env []string, dir string, addr func(line string) string, known string) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the benchmark
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, kind+".out"))
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	p := &process{kind: kind, cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	found := make(chan string, 2)
	scan := func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if a := addr(line); a != "" {
				select {
				case found <- a:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}
	exited := make(chan struct{}, 2)
	go func() { scan(stdout); exited <- struct{}{} }()
	go func() { scan(stderr); exited <- struct{}{} }()
	go func() {
		<-exited
		<-exited
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if known != "" {
		p.addr = known
		return p, nil
	}
	select {
	case p.addr = <-found:
	case <-p.done:
		return nil, fmt.Errorf("%s exited before it listened (see %s)", kind, logFile.Name())
	case <-time.After(120 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s: no address within 120 s (see %s)", kind, logFile.Name())
	}
	return p, nil
}

// stop interrupts p and waits for it to exit (killing it after 10 s).
func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpuTime is the CPU time of process pid so far (cpubench.CPUTime: the
// one way both benchmarks measure it).
var cpuTime = cpubench.CPUTime

// writeCalls is the number of write system calls process pid made so
// far (syscw of /proc/PID/io: write and writev on sockets and files).
func writeCalls(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "syscw: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no syscw in /proc/%d/io", pid)
}

// freePort returns a loopback address whose port was free a moment ago,
// for a proxy that must be told where to listen.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits until addr accepts connections or p exits.
func waitListening(p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited", p.kind)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s does not accept connections after %v: %w", p.kind, addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contextSwitches is the number of context switches of process pid so
// far, voluntary (a thread blocked: a wait, a sleep) and not, summed over
// its threads.
func contextSwitches(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var sum int64
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for l := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

// userSystem is the user and system CPU time of process pid so far
// (utime and stime of /proc/PID/stat, in clock ticks of 10 ms).
func userSystem(pid int) (user, system time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The fields after the command, which is in parentheses.
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14, utime
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15, stime
	return time.Duration(ut) * 10 * time.Millisecond, time.Duration(st) * 10 * time.Millisecond
}
