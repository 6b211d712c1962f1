// Command proxybench runs robotsproxy side by side with bare goproxy
// (robotsproxy's outbound transport and nothing else), smokescreen and
// Squid, in alternating rounds, and prints the table of robotsproxy's
// performance targets (figure, robotsproxy, reference, ratio, target,
// met?) and each proxy's figures, in markdown:
//
//	cd bench && go run ./proxybench
//
// Every proxy runs in a process of its own, in front of the same origins
// (this process: one over HTTP, one over HTTPS reached through
// intercepted tunnels), 100 B pages, the same User-Agent. robotsproxy
// runs with its default configuration and its audit log in a file,
// Squid with one worker, its access log on and no cache, smokescreen
// with its log in a file. Three phases, each in rounds whose order of
// proxies rotates:
//
//   - CPU: each proxy pinned to the last CPU (this process to the
//     others), -requests requests from 32 keep-alive connections; the
//     proxy's CPU time per request from its threads' scheduler
//     statistics. Plain HTTP for all, and HTTP/1.1 inside intercepted
//     tunnels for robotsproxy and bare goproxy.
//   - throughput: nothing pinned, 32 keep-alive connections of a light
//     load generator (raw HTTP/1.1 on sockets) for -duration; requests
//     per second and the latencies' p50 and p99.
//   - hey: the same with hey -c 32, when hey is installed.
//
// With -counts it counts instead, whatever the machine's load:
// instructions per request (valgrind --tool=callgrind) and system calls
// per request (strace -c -f), for robotsproxy and bare goproxy.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// concurrency is the number of client connections.
const concurrency = 32

type options struct {
	rounds, heyRounds int
	requests          int64
	duration          time.Duration
	kinds             []string
	counts            bool
	countRequests     int64
	keep, verbose     bool
	perfDir           string
	phases            map[string]bool
	before            string
	// extra and beforeExtra are YAML appended to robotsproxy's and the
	// -before build's configuration (-config, -before-config).
	extra, beforeExtra string
}

func main() {
	var o options
	var proxies, phases string
	flag.IntVar(&o.rounds, "rounds", 7, "rounds of the CPU and throughput phases")
	flag.IntVar(&o.heyRounds, "hey-rounds", 3, "rounds of hey -c 32 (0: none)")
	flag.Int64Var(&o.requests, "requests", 20000, "requests per proxy and round of the CPU phase")
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "length of each throughput measurement")
	flag.StringVar(&proxies, "proxies", "robotsproxy,bare,smokescreen,squid", "proxies to run, of robotsproxy, bare, smokescreen, squid")
	flag.StringVar(&phases, "phases", "cpu,throughput,hey", "phases to run, of cpu, throughput, hey")
	flag.StringVar(&o.before, "before", "", "also run this robotsproxy binary (an earlier build), as proxy \"before\", in the same rounds")
	flag.StringVar(&o.extra, "config", "", "YAML appended to robotsproxy's configuration (for example \"live:\\n  enabled: false\\n\"), to measure a setting")
	flag.StringVar(&o.beforeExtra, "before-config", "", "YAML appended to the -before build's configuration; with -before set to this checkout's build, two settings compare in the same rounds")
	flag.BoolVar(&o.counts, "counts", false, "count instructions (callgrind) and system calls (strace) per request instead of timing")
	flag.Int64Var(&o.countRequests, "count-requests", 2000, "requests per count with -counts")
	flag.BoolVar(&o.keep, "keep", false, "keep the run's folder (audit logs, proxies' output, callgrind files)")
	flag.BoolVar(&o.verbose, "v", false, "print every round's figures as they come")
	flag.StringVar(&o.perfDir, "perf", "", "record each measurement of the CPU phase with perf record -g into this folder (perf.MEASUREMENT.PROXY.ROUND.data)")
	flag.Parse()
	o.kinds = strings.Split(proxies, ",")
	for _, k := range o.kinds {
		if _, ok := kindNames[k]; !ok || k == kindBefore {
			fatalf("-proxies: unknown proxy %q", k)
		}
	}
	o.phases = map[string]bool{}
	for _, p := range strings.Split(phases, ",") {
		if p != "cpu" && p != "throughput" && p != "hey" {
			fatalf("-phases: unknown phase %q", p)
		}
		o.phases[p] = true
	}
	if !slices.Contains(o.kinds, kindRobotsproxy) {
		fatalf("-proxies must include robotsproxy")
	}
	if o.before != "" {
		if _, err := os.Stat(o.before); err != nil {
			fatalf("-before: %v", err)
		}
		o.kinds = append(o.kinds, kindBefore)
	}
	if err := run(o); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "proxybench: "+format+"\n", args...)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "proxybench-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o711); err != nil { // Squid's own user reaches its folder
		return err
	}
	if o.keep {
		progress("the run's files are in %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	want := map[string]bool{}
	for _, k := range o.kinds {
		want[k] = true
	}
	progress("building robotsproxy, bare goproxy%s", map[bool]string{true: " and smokescreen " + smokescreenVersion}[want[kindSmokescreen]])
	bins, err := buildBinaries(dir, want)
	if err != nil {
		return err
	}
	if o.before != "" {
		if bins.before, err = filepath.Abs(o.before); err != nil {
			return err
		}
	}
	if want[kindSquid] {
		kindNames[kindSquid] = strings.TrimSpace("Squid " + squidVersion(bins.squid))
	}
	e := &env{dir: dir, bins: bins, extra: map[string]string{kindRobotsproxy: o.extra, kindBefore: o.beforeExtra}}
	if e.origins, err = startOrigins(dir); err != nil {
		return err
	}
	defer e.origins.close()
	ca, err := mitm.NewCA(mitm.CAOptions{})
	if err != nil {
		return err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	e.caCert, e.caKey = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	if err := os.WriteFile(e.caCert, ca.CertPEM(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(e.caKey, key, 0o600); err != nil {
		return err
	}
	tlsConfig := &tls.Config{RootCAs: ca.CertPool()}
	m := machine{start: loadAvg()}
	if o.counts {
		c, err := e.counts(o, tlsConfig)
		if err != nil {
			return err
		}
		m.end = loadAvg()
		c.print(os.Stdout)
		m.print(os.Stdout, e)
		return nil
	}
	r := results{}
	if o.phases["cpu"] {
		if err := e.cpuPhase(o, tlsConfig, r); err != nil {
			return err
		}
	}
	if o.phases["throughput"] {
		if err := e.loadPhase(o, r); err != nil {
			return err
		}
	}
	if !o.phases["hey"] {
		// not asked for
	} else if hey, err := exec.LookPath("hey"); err != nil || o.heyRounds == 0 {
		progress("no hey phase (%s)", map[bool]string{true: "hey is not installed", false: "-hey-rounds 0"}[err != nil])
	} else if err := e.heyPhase(o, hey, r); err != nil {
		return err
	}
	m.end = loadAvg()
	fmt.Println("### Targets")
	fmt.Println()
	printTable(os.Stdout, r)
	fmt.Println()
	fmt.Println("### Each proxy (medians of the rounds)")
	fmt.Println()
	printDetails(os.Stdout, r, o.kinds)
	fmt.Println()
	if o.before != "" {
		fmt.Println("### robotsproxy against the -before build (the same rounds)")
		fmt.Println()
		printBefore(os.Stdout, r)
		fmt.Println()
	}
	m.print(os.Stdout, e)
	return nil
}

// phase runs rounds of measure for every proxy of kinds, the order of
// the proxies rotating from one round to the next. Each proxy is started
// once for the phase, with spec.
func (e *env) phase(name string, o options, rounds int, spec func(kind string) proxySpec, measure func(round int, p *process) error) error {
	procs := map[string]*process{}
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for _, k := range o.kinds {
		p, err := e.start(spec(k))
		if err != nil {
			return err
		}
		procs[k] = p
	}
	for round := range rounds {
		order := slices.Concat(o.kinds[round%len(o.kinds):], o.kinds[:round%len(o.kinds)])
		progress("%s: round %d of %d (%s)", name, round+1, rounds, strings.Join(order, ", "))
		for _, k := range order {
			if err := measure(round, procs[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// cpuPhase measures each proxy's CPU time per request, pinned.
func (e *env) cpuPhase(o options, tlsConfig *tls.Config, r results) error {
	n := numCPU()
	pin := pinArgs(n)
	if pin != "" {
		others := make([]int, 0, n-1)
		for i := range n - 1 {
			others = append(others, i)
		}
		if err := pinSelf(others); err != nil {
			return fmt.Errorf("pin this process: %w", err)
		}
		defer func() { _ = pinSelf(nil) }()
	} else {
		progress("one CPU: nothing is pinned")
	}
	spec := func(k string) proxySpec {
		s := proxySpec{kind: k, cpus: pin}
		if localEnv != nil {
			s.env = localEnv(k)
		}
		return s
	}
	return e.phase("CPU", o, o.rounds, spec, func(round int, p *process) error {
		for _, c := range []struct {
			m   string
			url string
		}{
			{mCPUAllowed, e.origins.plain.URL + "/size/100"},
			{mCPUIntercepted, e.origins.tls.URL + "/size/100"},
		} {
			if c.m == mCPUIntercepted && p.kind != kindRobotsproxy && p.kind != kindBare && p.kind != kindBefore {
				continue
			}
			t, err := newTarget(p.addr, c.url, userAgent, tlsConfig)
			if err != nil {
				return err
			}
			l := loadRun{conns: concurrency, warm: 20, count: o.requests, settled: e.noNewDials()}
			if localProfile != nil {
				l.between, l.after = localProfile(p, c.m, round)
			}
			if o.perfDir != "" {
				name := fmt.Sprintf("perf.%s.%s.%d.data", strings.ReplaceAll(c.m, "/", "-"), p.kind, round+1)
				l.between, l.after = perfRecord(p.pid, filepath.Join(o.perfDir, name))
			}
			s, err := measureLoad(p, t, l, e.origins)
			if err != nil {
				return err
			}
			r.add(c.m, p.kind, s)
			if o.verbose {
				progress("  %s %s: %.1f µs CPU/request (%.0f%% system), %.2f writes/request, %.2f context switches/request, %.0f req/s, %d connections closed by the proxy, %d opened to the origin", c.m, p.kind, cpuUS(s), 100*s.sysShare, s.writesPerReq, s.switches, s.reqPerSec, s.redials, s.originDials)
			}
		}
		return nil
	})
}

// loadPhase measures throughput and latency, nothing pinned.
func (e *env) loadPhase(o options, r results) error {
	spec := func(k string) proxySpec { return proxySpec{kind: k} }
	return e.phase("throughput", o, o.rounds, spec, func(round int, p *process) error {
		t, err := newTarget(p.addr, e.origins.plain.URL+"/size/100", userAgent, nil)
		if err != nil {
			return err
		}
		s, err := measureLoad(p, t, loadRun{conns: concurrency, warm: 50, duration: o.duration, latencies: true}, e.origins)
		if err != nil {
			return err
		}
		r.add(mLoad, p.kind, s)
		if o.verbose {
			progress("  %s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %.1f µs CPU/request", p.kind, s.reqPerSec, p50ms(s), p99ms(s), cpuUS(s))
		}
		return nil
	})
}

// heyPhase measures throughput with hey.
func (e *env) heyPhase(o options, hey string, r results) error {
	spec := func(k string) proxySpec { return proxySpec{kind: k} }
	return e.phase("hey", o, o.heyRounds, spec, func(round int, p *process) error {
		s, err := measureHey(hey, p, e.origins.plain.URL+"/size/100", concurrency, o.duration)
		if err != nil {
			return err
		}
		r.add(mHey, p.kind, s)
		if o.verbose {
			progress("  %s: %.0f req/s, p99 %.2f ms", p.kind, s.reqPerSec, p99ms(s))
		}
		return nil
	})
}

// machine is the state of the machine around a run.
type machine struct {
	start, end string // /proc/loadavg's first three figures
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	return strings.Join(f[:min(3, len(f))], " ")
}

func (m machine) print(w *os.File, e *env) {
	fmt.Fprintln(w, "### Machine")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- %s, %d CPUs (%s), %s/%s, %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), numCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "- load average (1, 5, 15 min) before: %s; after: %s\n", m.start, m.end)
	if c := commit(); c != "" {
		fmt.Fprintf(w, "- robotsproxy at %s\n", c)
	}
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// commit is the robotsproxy checkout's commit, with "+changes" when its
// work tree differs from it; "" outside a git checkout.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if err := exec.Command("git", "diff", "--quiet", "HEAD", "--", "..").Run(); err != nil {
		c += "+changes"
	}
	return c
}

// Local hooks (see zz_pprof_local.go; nil without it).
var (
	localEnv     func(kind string) []string
	localProfile func(p *process, m string, round int) (start, stop func())
)
