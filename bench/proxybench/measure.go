package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// sample is what one measurement of one proxy found.
type sample struct {
	cpuPerReq    time.Duration // the proxy process's CPU time per request
	sysShare     float64       // the share of it in the kernel (system time)
	writesPerReq float64       // its write system calls per request
	switches     float64       // its context switches per request
	redials      int64         // connections the proxy closed, dialled again
	originDials  int64         // connections the proxy opened to the origins
	reqPerSec    float64
	p50, p99     time.Duration // zero when latencies were not kept
}

// measureLoad runs l against t through p and reads p's CPU time and write
// calls around the measured requests.
func measureLoad(p *process, t *target, l loadRun, o *origins) (sample, error) {
	var cpu0, cpu1 time.Duration
	var w0, w1, cs0, cs1, d0, d1 int64
	var u0, u1, s0, s1 time.Duration
	var errCPU error
	before, after := l.between, l.after
	l.between = func() {
		if before != nil {
			before()
		}
		cpu0, errCPU = cpuTime(p.pid)
		w0, _ = writeCalls(p.pid)
		cs0 = contextSwitches(p.pid)
		d0 = o.dials.Load()
		u0, s0 = userSystem(p.pid)
	}
	l.after = func() {
		if after != nil {
			defer after()
		}
		var err error
		if cpu1, err = cpuTime(p.pid); err != nil && errCPU == nil {
			errCPU = err
		}
		w1, _ = writeCalls(p.pid)
		cs1 = contextSwitches(p.pid)
		d1 = o.dials.Load()
		u1, s1 = userSystem(p.pid)
	}
	res, err := l.run(t)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w", p.kind, err)
	}
	if errCPU != nil {
		return sample{}, errCPU
	}
	n := float64(res.requests)
	s := sample{
		cpuPerReq:    time.Duration(float64(cpu1-cpu0) / n),
		writesPerReq: float64(w1-w0) / n,
		switches:     float64(cs1-cs0) / n,
		redials:      res.redials,
		originDials:  d1 - d0,
		sysShare:     float64(s1-s0) / float64(max(1, (u1-u0)+(s1-s0))),
		reqPerSec:    res.reqPerSec(),
	}
	if l.latencies {
		s.p50, s.p99 = res.percentile(50), res.percentile(99)
	}
	return s, nil
}

// measureHey runs hey (-c conns, for d) against rawURL through p, and
// reads p's CPU time around it.
func measureHey(hey string, p *process, rawURL string, conns int, d time.Duration) (sample, error) {
	cpu0, err := cpuTime(p.pid)
	if err != nil {
		return sample{}, err
	}
	w0, _ := writeCalls(p.pid)
	cmd := exec.Command(hey, "-c", strconv.Itoa(conns), "-z", d.String(), "-x", "http://"+p.addr,
		"-H", "User-Agent: "+userAgent, rawURL)
	out, err := cmd.Output()
	if err != nil {
		return sample{}, fmt.Errorf("hey through %s: %v\n%s", p.kind, err, out)
	}
	cpu1, err := cpuTime(p.pid)
	if err != nil {
		return sample{}, err
	}
	w1, _ := writeCalls(p.pid)
	h, err := parseHey(out)
	if err != nil {
		return sample{}, fmt.Errorf("hey through %s: %w", p.kind, err)
	}
	if h.other > 0 {
		return sample{}, fmt.Errorf("hey through %s: %d answers were not 200 or failed", p.kind, h.other)
	}
	n := float64(h.ok)
	return sample{cpuPerReq: time.Duration(float64(cpu1-cpu0) / n), writesPerReq: float64(w1-w0) / n,
		reqPerSec: h.reqPerSec, p50: h.p50, p99: h.p99}, nil
}

// heyResult is what hey's summary says.
type heyResult struct {
	reqPerSec float64
	p50, p99  time.Duration
	ok, other int // answers 200, and the rest (other statuses, errors)
}

var (
	heyRPS    = regexp.MustCompile(`(?m)^\s*Requests/sec:\s*([0-9.]+)`)
	heyPct    = regexp.MustCompile(`(?m)^\s*(50|99)%+ in ([0-9.]+) secs`)
	heyStatus = regexp.MustCompile(`(?m)^\s*\[(\d+)\]\s+(\d+) responses`)
	heyErrors = regexp.MustCompile(`(?m)^\s*\[(\d+)\]\s+(.+)$`)
)

// parseHey reads hey's summary.
func parseHey(out []byte) (heyResult, error) {
	var h heyResult
	m := heyRPS.FindSubmatch(out)
	if m == nil {
		return h, fmt.Errorf("no Requests/sec in hey's output:\n%s", out)
	}
	h.reqPerSec, _ = strconv.ParseFloat(string(m[1]), 64)
	for _, m := range heyPct.FindAllSubmatch(out, -1) {
		secs, _ := strconv.ParseFloat(string(m[2]), 64)
		d := time.Duration(secs * float64(time.Second))
		if string(m[1]) == "50" {
			h.p50 = d
		} else {
			h.p99 = d
		}
	}
	for _, m := range heyStatus.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		if string(m[1]) == "200" {
			h.ok += n
		} else {
			h.other += n
		}
	}
	if _, errs, ok := bytes.Cut(out, []byte("Error distribution:")); ok {
		for _, m := range heyErrors.FindAllSubmatch(errs, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			h.other += n
		}
	}
	if h.ok == 0 {
		return h, fmt.Errorf("no answer 200 in hey's output:\n%s", out)
	}
	return h, nil
}

// straceCounts reads the table of strace -c: calls per system call, and
// their total.
func straceCounts(out []byte) (map[string]int64, int64) {
	calls := map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// % time, seconds, usecs/call, calls, [errors,] syscall
		if len(f) < 5 || strings.HasPrefix(f[0], "%") || strings.HasPrefix(f[0], "-") {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		name := f[len(f)-1]
		if name == "total" {
			total = n
			continue
		}
		calls[name] = n
	}
	return calls, total
}

// perfRecord returns the hooks of a load run that record process pid
// with perf record -g into file while the measured requests run.
func perfRecord(pid int, file string) (start, stop func()) {
	var cmd *exec.Cmd
	start = func() {
		cmd = exec.Command("perf", "record", "-q", "-g", "-F", "4999", "-e", "cpu-clock", "-p", strconv.Itoa(pid), "-o", file)
		if err := cmd.Start(); err != nil {
			progress("perf record: %v", err)
			cmd = nil
			return
		}
		time.Sleep(200 * time.Millisecond) // attached to every thread
	}
	stop = func() {
		if cmd != nil {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
	return start, stop
}
