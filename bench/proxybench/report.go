package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// results are the samples of a run: for each measurement (phase/case) and
// proxy, one sample per round, in round order.
type results map[string]map[string][]sample

func (r results) add(measurement, kind string, s sample) {
	if r[measurement] == nil {
		r[measurement] = map[string][]sample{}
	}
	r[measurement][kind] = append(r[measurement][kind], s)
}

// Measurements (the keys of results).
const (
	mCPUAllowed     = "cpu/allowed"     // pinned, plain HTTP, 100 B
	mCPUIntercepted = "cpu/intercepted" // pinned, HTTP/1.1 inside an intercepted tunnel, 100 B
	mLoad           = "load/allowed"    // unpinned, 32 keep-alive clients for a duration
	mHey            = "hey/allowed"     // unpinned, hey -c 32 for a duration
)

// median of xs (NaN for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// paired is a figure of robotsproxy against a reference, round by round:
// f(robotsproxy's sample, the reference's sample of the same round).
type paired struct {
	med, lo, hi float64 // the median, least and greatest of the rounds
	n           int
}

func pair(a, b []sample, f func(a, b sample) float64) paired {
	var xs []float64
	for i := range min(len(a), len(b)) {
		if v := f(a[i], b[i]); !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return paired{med: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	}
	return paired{med: median(xs), lo: slices.Min(xs), hi: slices.Max(xs), n: len(xs)}
}

// of returns the median over rounds of f of kind's samples.
func of(ss []sample, f func(sample) float64) float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	return median(xs)
}

func cpuUS(s sample) float64    { return float64(s.cpuPerReq) / float64(time.Microsecond) }
func rps(s sample) float64      { return s.reqPerSec }
func p50ms(s sample) float64    { return float64(s.p50) / float64(time.Millisecond) }
func p99ms(s sample) float64    { return float64(s.p99) / float64(time.Millisecond) }
func writes(s sample) float64   { return s.writesPerReq }
func switches(s sample) float64 { return s.switches }
func sysShare(s sample) float64 { return s.sysShare }
func ratio(f func(sample) float64) func(a, b sample) float64 {
	return func(a, b sample) float64 { return f(a) / f(b) }
}
func diff(f func(sample) float64) func(a, b sample) float64 {
	return func(a, b sample) float64 { return f(a) - f(b) }
}

// row is one line of the table.
type row struct {
	figure      string
	measurement string
	reference   string // the proxy compared with
	value       func(sample) float64
	unit        string
	compare     func(a, b sample) float64
	target      string
	met         func(float64) bool // nil: no target
	difference  bool               // the figure is a difference, not a ratio
}

// targets are the figures of the table, with their targets.
var targets = []row{
	{"CPU per allowed request, 100 B, audit log to a file (proxy pinned to one CPU)", mCPUAllowed, kindBare,
		cpuUS, "µs", ratio(cpuUS), "≤ 1.10×", func(x float64) bool { return x <= 1.10 }, false},
	{"CPU per allowed request inside an intercepted tunnel (HTTP/1.1, pinned)", mCPUIntercepted, kindBare,
		cpuUS, "µs", ratio(cpuUS), "≤ 1.10×", func(x float64) bool { return x <= 1.10 }, false},
	{"throughput, 32 keep-alive clients (light Go load generator)", mLoad, kindBare,
		rps, "req/s", ratio(rps), "≥ 0.95×", func(x float64) bool { return x >= 0.95 }, false},
	{"the same against smokescreen", mLoad, kindSmokescreen,
		rps, "req/s", ratio(rps), "≥ 1.15×", func(x float64) bool { return x >= 1.15 }, false},
	{"the same against Squid", mLoad, kindSquid,
		rps, "req/s", ratio(rps), "≥ 1.0×", func(x float64) bool { return x >= 1.0 }, false},
	{"throughput with `hey -c 32`", mHey, kindSquid,
		rps, "req/s", ratio(rps), "", nil, false},
	{"p99 latency under the load of the throughput rows", mLoad, kindBare,
		p99ms, "ms", diff(p99ms), "≤ +1 ms", func(x float64) bool { return x <= 1 }, true},
}

// printTable writes the table (markdown) for r: each figure's
// median for robotsproxy and its reference, the median of the rounds'
// ratios (or differences) with their range, the target and whether it is
// met. Rows whose proxies were not measured are left out.
func printTable(w io.Writer, r results) {
	fmt.Fprintln(w, "| figure | robotsproxy | reference | ratio (rounds) | target | met? |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, t := range targets {
		rp, ref := r[t.measurement][kindRobotsproxy], r[t.measurement][t.reference]
		if len(rp) == 0 || len(ref) == 0 {
			continue
		}
		pr := pair(rp, ref, t.compare)
		var cmp string
		if t.difference {
			cmp = fmt.Sprintf("%+.2f ms (%+.2f to %+.2f, %d rounds)", pr.med, pr.lo, pr.hi, pr.n)
		} else {
			cmp = fmt.Sprintf("%.2f× (%.2f–%.2f, %d rounds)", pr.med, pr.lo, pr.hi, pr.n)
		}
		met := "—"
		if t.met != nil {
			met = "no"
			if t.met(pr.med) {
				met = "yes"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s %s | %s | %s | %s |\n", t.figure,
			format(of(rp, t.value), t.unit), kindNames[t.reference], format(of(ref, t.value), t.unit),
			cmp, orDash(t.target), met)
	}
}

// printDetails writes, for each measurement, every proxy's medians.
func printDetails(w io.Writer, r results, order []string) {
	fmt.Fprintln(w, "| measurement | proxy | CPU/request | of it in the kernel | write calls/request | context switches/request | req/s | p50 | p99 | rounds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, m := range []string{mCPUAllowed, mCPUIntercepted, mLoad, mHey} {
		for _, k := range order {
			ss := r[m][k]
			if len(ss) == 0 {
				continue
			}
			p50, p99 := "—", "—"
			if ss[0].p99 > 0 {
				p50, p99 = format(of(ss, p50ms), "ms"), format(of(ss, p99ms), "ms")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.0f%% | %.2f | %.2f | %s | %s | %s | %d |\n", m, kindNames[k],
				format(of(ss, cpuUS), "µs"), 100*of(ss, sysShare), of(ss, writes), of(ss, switches), format(of(ss, rps), "req/s"), p50, p99, len(ss))
		}
	}
}

// format writes v with its unit: µs and ms to one decimal (two under
// 10 ms), req/s with thousands separated.
func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch unit {
	case "":
		return fmt.Sprintf("%.2f", v)
	case "req/s":
		return thousands(int64(math.Round(v))) + " req/s"
	case "ms":
		if v < 10 {
			return fmt.Sprintf("%.2f ms", v)
		}
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// printBefore writes robotsproxy's figures against the -before build's,
// round by round.
func printBefore(w io.Writer, r results) {
	fmt.Fprintln(w, "| measurement | figure | robotsproxy | before | ratio (rounds) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, m := range []string{mCPUAllowed, mCPUIntercepted, mLoad, mHey} {
		rp, b := r[m][kindRobotsproxy], r[m][kindBefore]
		if len(rp) == 0 || len(b) == 0 {
			continue
		}
		for _, f := range []struct {
			name  string
			value func(sample) float64
			unit  string
		}{{"CPU/request", cpuUS, "µs"}, {"req/s", rps, "req/s"}, {"write calls/request", writes, ""}} {
			pr := pair(rp, b, ratio(f.value))
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f× (%.2f–%.2f, %d rounds) |\n", m, f.name,
				format(of(rp, f.value), f.unit), format(of(b, f.value), f.unit), pr.med, pr.lo, pr.hi, pr.n)
		}
	}
}
