// Package cpubench holds BenchmarkProxyCPU, which measures the CPU time a
// proxy process spends per request: bare goproxy (this package's test
// binary, re-executed) against the robotsproxy binary, each in its own
// process and, with ROBOTSPROXY_BENCH_CPU, pinned to its own CPU, while
// this process runs the origin and the clients. Its one function, CPUTime,
// is how it and bench/proxybench read a process's CPU time.
package cpubench
