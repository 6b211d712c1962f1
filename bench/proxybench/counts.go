package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// count is what -counts found for one proxy and request kind.
type count struct {
	measurement, kind string
	instructions      float64            // per request, callgrind's Ir
	syscalls          float64            // per request, all of them
	bySyscall         map[string]float64 // per request
	callgrindFile     string
}

type counts []count

// counts measures, for robotsproxy and bare goproxy (and Squid and
// smokescreen on plain HTTP, when asked for), the instructions per
// request under callgrind and the system calls per request under
// strace, -count-requests each after a warm-up.
func (e *env) counts(o options, tlsConfig *tls.Config) (counts, error) {
	for _, tool := range []string{"valgrind", "callgrind_control", "strace"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("-counts needs %s (apt-get install valgrind strace)", tool)
		}
	}
	var cs counts
	for _, c := range []struct{ m, url string }{
		{mCPUAllowed, e.origins.plain.URL + "/size/100"},
		{mCPUIntercepted, e.origins.tls.URL + "/size/100"},
	} {
		for _, k := range o.kinds {
			if c.m == mCPUIntercepted && k != kindRobotsproxy && k != kindBare && k != kindBefore {
				continue
			}
			progress("counting %s %s", c.m, k)
			n, err := e.count(o, k, c.m, c.url, tlsConfig)
			if err != nil {
				return nil, err
			}
			cs = append(cs, n)
		}
	}
	return cs, nil
}

func (e *env) count(o options, kind, m, url string, tlsConfig *tls.Config) (count, error) {
	c := count{measurement: m, kind: kind}
	if kind != kindSquid { // Squid changes its user, which callgrind_control cannot follow
		// A count during which the proxy opened connections (TLS
		// handshakes: millions of instructions each) is not the steady
		// state: it is made again, up to three times.
		for try := 1; ; try++ {
			churn, err := e.countInstructions(o, &c, url, tlsConfig)
			if err != nil {
				return c, err
			}
			if !churn || try == 3 {
				break
			}
		}
	}
	return c, e.countSyscalls(o, &c, url, tlsConfig)
}

// countInstructions counts the instructions of -count-requests requests
// (after a warm-up) with callgrind; churn reports that connections were
// opened or closed during the count.
func (e *env) countInstructions(o options, c *count, url string, tlsConfig *tls.Config) (churn bool, err error) {
	kind, m := c.kind, c.measurement
	// Instructions, under callgrind. Go's asynchronous preemption
	// (signals) is off for both Go proxies: callgrind does not follow it.
	out := filepath.Join(e.dir, fmt.Sprintf("callgrind.%s.%s", kind, strings.ReplaceAll(m, "/", "-")))
	spec := proxySpec{kind: kind, env: []string{"GODEBUG=asyncpreemptoff=1"}, slow: true,
		wrap: []string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out}}
	p, err := e.start(spec)
	if err != nil {
		return false, err
	}
	t, err := newTarget(p.addr, url, userAgent, tlsConfig)
	if err != nil {
		p.stop()
		return false, err
	}
	var ctlErr error
	ctl := func(arg string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "callgrind_control", arg, strconv.Itoa(p.pid)).CombinedOutput(); err != nil && ctlErr == nil {
			ctlErr = fmt.Errorf("callgrind_control %s: %v\n%s", arg, err, out)
		}
	}
	var dials, robots int64
	l := loadRun{conns: concurrency, warm: 10, count: o.countRequests, settled: e.noNewDials(),
		between: func() { dials, robots = e.origins.dials.Load(), e.origins.robots.Load(); ctl("-z") },
		after: func() {
			ctl("-d")
			dials, robots = e.origins.dials.Load()-dials, e.origins.robots.Load()-robots
		}}
	res, err := l.run(t)
	p.stop()
	if err == nil {
		err = ctlErr
	}
	if err != nil {
		return false, fmt.Errorf("%s under callgrind: %w", kind, err)
	}
	// The dump callgrind_control -d made (the one made at exit is out).
	c.callgrindFile = out + ".1"
	total, err := callgrindTotal(c.callgrindFile)
	if err != nil {
		return false, fmt.Errorf("%s under callgrind: %w", kind, err)
	}
	c.instructions = total / float64(o.countRequests)
	if dials > 0 || res.redials > 0 {
		// Connections (and TLS handshakes) inside the count: it is not
		// the steady state of warm connections.
		progress("%s %s under callgrind opened %d connections to the origins (%d robots.txt requests) and had %d closed", m, kind, dials, robots, res.redials)
		return true, nil
	}
	return false, nil
}

// countSyscalls counts the system calls of -count-requests requests
// (after a warm-up) with strace -c -f.
func (e *env) countSyscalls(o options, c *count, url string, tlsConfig *tls.Config) error {
	kind, m := c.kind, c.measurement
	p, err := e.start(proxySpec{kind: kind})
	if err != nil {
		return err
	}
	defer p.stop()
	t, err := newTarget(p.addr, url, userAgent, tlsConfig)
	if err != nil {
		return err
	}
	traceFile := filepath.Join(e.dir, fmt.Sprintf("strace.%s.%s", kind, strings.ReplaceAll(m, "/", "-")))
	var strace *exec.Cmd
	var straceErr error
	l := loadRun{conns: concurrency, warm: 20, count: o.countRequests, settled: e.noNewDials(),
		between: func() {
			strace = exec.Command("strace", "-f", "-c", "-p", strconv.Itoa(p.pid), "-o", traceFile)
			stderr, err := strace.StderrPipe()
			if err == nil {
				err = strace.Start()
			}
			if err != nil {
				straceErr = err
				return
			}
			attached := make(chan struct{})
			go func() {
				br := bufio.NewReader(stderr)
				if _, err := br.ReadString('\n'); err == nil {
					close(attached)
				}
				_, _ = io.Copy(io.Discard, br)
			}()
			select {
			case <-attached:
				time.Sleep(500 * time.Millisecond) // every thread
			case <-time.After(10 * time.Second):
				straceErr = fmt.Errorf("strace did not attach to %s", kind)
			}
		},
		after: func() {
			if strace != nil && strace.Process != nil {
				_ = strace.Process.Signal(os.Interrupt)
				_ = strace.Wait()
			}
		}}
	if _, err := l.run(t); err != nil {
		return err
	}
	if straceErr != nil {
		return straceErr
	}
	data, err := os.ReadFile(traceFile)
	if err != nil {
		return fmt.Errorf("strace of %s: %w", kind, err)
	}
	calls, total64 := straceCounts(data)
	c.syscalls = float64(total64) / float64(o.countRequests)
	c.bySyscall = map[string]float64{}
	for name, n := range calls {
		c.bySyscall[name] = float64(n) / float64(o.countRequests)
	}
	return nil
}

// callgrindTotal reads the total instructions (Ir) of a callgrind dump.
func callgrindTotal(file string) (float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		for _, p := range []string{"totals:", "summary:"} {
			if v, ok := strings.CutPrefix(l, p); ok {
				n, err := strconv.ParseFloat(strings.Fields(v)[0], 64)
				return n, err
			}
		}
	}
	return 0, fmt.Errorf("%s: no totals", file)
}

// print writes the counts (markdown): instructions and system calls per
// request, and the system calls that take more than 0.05 per request.
func (cs counts) print(w io.Writer) {
	fmt.Fprintln(w, "### Counts per request")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| measurement | proxy | instructions | ratio to bare goproxy | system calls | by call |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range cs {
		ratio, instr := "—", "—"
		if c.instructions > 0 {
			instr = thousands(int64(c.instructions))
		}
		for _, b := range cs {
			if b.kind == kindBare && b.measurement == c.measurement && c.kind != kindBare && c.instructions > 0 {
				ratio = fmt.Sprintf("%.3f×", c.instructions/b.instructions)
			}
		}
		names := make([]string, 0, len(c.bySyscall))
		for n, v := range c.bySyscall {
			if v >= 0.05 {
				names = append(names, n)
			}
		}
		slices.SortFunc(names, func(a, b string) int {
			if d := c.bySyscall[b] - c.bySyscall[a]; d != 0 {
				if d > 0 {
					return 1
				}
				return -1
			}
			return strings.Compare(a, b)
		})
		var by []string
		for _, n := range names {
			by = append(by, fmt.Sprintf("%s %.2f", n, c.bySyscall[n]))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f | %s |\n", c.measurement, kindNames[c.kind],
			instr, ratio, c.syscalls, strings.Join(by, ", "))
	}
	fmt.Fprintln(w)
	for _, c := range cs {
		if c.callgrindFile == "" {
			continue
		}
		fmt.Fprintf(w, "- %s %s: `callgrind_annotate --inclusive=yes %s` (with -keep)\n", c.measurement, c.kind, c.callgrindFile)
	}
	fmt.Fprintln(w)
}

// noNewDials returns a loadRun.settled that is true once a pass opened
// no new connection to the origins: the proxy's pool has all it needs.
func (e *env) noNewDials() func() bool {
	last := int64(-1)
	return func() bool {
		n := e.origins.dials.Load()
		settled := n == last
		last = n
		return settled
	}
}
