package cpubench_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/internal/cpubench"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// Environment of BenchmarkProxyCPU.
const (
	// envCPU is the CPU list (taskset -c) the proxy process is pinned to;
	// unset, it is not pinned. Pin this process to the other CPUs:
	//
	//	ROBOTSPROXY_BENCH_CPU=1 taskset -c 0 go test -run '^$' -bench ProxyCPU -benchtime 20000x ./internal/cpubench/
	envCPU = "ROBOTSPROXY_BENCH_CPU"
	// envBinary is a robotsproxy binary to measure; unset, the benchmark
	// builds one from the module it runs in (go test's working directory).
	envBinary = "ROBOTSPROXY_BENCH_BINARY"
	// envSubscribers is the number of live view streams (/live/events)
	// that read robotsproxy's decisions while it is measured; unset, none.
	envSubscribers = "ROBOTSPROXY_BENCH_SUBSCRIBERS"
	// envChild makes TestBareChild serve bare goproxy, on the address it
	// prints, until its standard input closes; the value is the CA
	// directory for interception, or "-" for none.
	envChild = "ROBOTSPROXY_BENCH_BARE_CHILD"
)

// concurrency is the number of client connections.
const concurrency = 32

const benchUA = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"

const benchRobots = "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\n\nUser-agent: ExampleBot\nDisallow: /nope/\n"

// BenchmarkProxyCPU reports, per request, the CPU time of the proxy
// process (proxy-cpu-ns/op, from the scheduler statistics of its threads)
// and the requests per second, for bare goproxy and for robotsproxy (the
// binary, default configuration, audit log in a file): allowed requests
// with 100 B and 64 KiB bodies, allowed requests inside intercepted
// tunnels over HTTP/1.1 and over HTTP/2 (the client offers h2 by ALPN;
// bare goproxy serves it with AllowHTTP2, robotsproxy by default), and
// denied requests. Each sub-benchmark starts its own proxy;
// run it with -benchtime Nx and repeat the whole run (not -count) to
// interleave the proxies:
//
//	go test -c -o /tmp/cpubench.test ./internal/cpubench/ && go build -o /tmp/robotsproxy .
//	for i in $(seq 10); do ROBOTSPROXY_BENCH_BINARY=/tmp/robotsproxy ROBOTSPROXY_BENCH_CPU=1 \
//	    taskset -c 0 /tmp/cpubench.test -test.run '^$' -test.bench ProxyCPU -test.benchtime 20000x >> /tmp/cpu.txt; done
//	benchstat -col /proxy /tmp/cpu.txt
func BenchmarkProxyCPU(b *testing.B) {
	for _, c := range []struct {
		name      string
		intercept bool
		h2        bool // the client offers h2 inside the tunnel
		path      string
		status    int
		kinds     []string
	}{
		{"allowed/body=100B", false, false, "/size/100", 200, []string{"bare", "robotsproxy"}},
		{"allowed/body=64KiB", false, false, "/size/65536", 200, []string{"bare", "robotsproxy"}},
		{"intercepted/body=100B", true, false, "/size/100", 200, []string{"bare", "robotsproxy"}},
		{"intercepted-h2/body=100B", true, true, "/size/100", 200, []string{"bare", "robotsproxy"}},
		{"denied", false, false, "/nope/size/100", 403, []string{"robotsproxy"}},
	} {
		for _, kind := range c.kinds {
			b.Run(c.name+"/proxy="+kind, func(b *testing.B) {
				o := newOrigin(b, c.intercept)
				p := startProxy(b, kind, o, c.intercept)
				load(b, p, o.URL+c.path, c.status, c.h2)
			})
		}
	}
}

// newOrigin serves benchRobots and, at /size/N, N octets
// (testkit.NewSizedOrigin).
func newOrigin(b *testing.B, tlsOrigin bool) *httptest.Server {
	return testkit.NewSizedOrigin(b, benchRobots, tlsOrigin).Server
}

// proxyProcess is a proxy running in a child process.
type proxyProcess struct {
	cmd   *exec.Cmd
	pid   int
	addr  string
	admin string   // robotsproxy's admin listener
	ca    *mitm.CA // the CA of intercepted tunnels, nil for none
}

// startProxy starts bare goproxy or the robotsproxy binary in front of o.
func startProxy(b *testing.B, kind string, o *httptest.Server, intercept bool) *proxyProcess {
	dir := b.TempDir()
	p := &proxyProcess{}
	env := os.Environ()
	if o.TLS != nil { // the proxy trusts the test origin as a system root
		certFile := filepath.Join(dir, "origin.pem")
		writeFile(b, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.Certificate().Raw}))
		env = append(env, "SSL_CERT_FILE="+certFile)
	}
	caDir := "-"
	if intercept {
		ca, err := mitm.NewCA(mitm.CAOptions{})
		if err != nil {
			b.Fatal(err)
		}
		key, err := ca.KeyPEM()
		if err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(dir, "ca.pem"), ca.CertPEM())
		writeFile(b, filepath.Join(dir, "ca-key.pem"), key)
		p.ca, caDir = ca, dir
	}
	var args []string
	switch kind {
	case "bare":
		args = []string{os.Args[0], "-test.run", "^TestBareChild$"}
		env = append(env, envChild+"="+caDir)
	case "robotsproxy":
		args = robotsproxyArgs(b, dir, o, intercept)
	}
	if cpu := os.Getenv(envCPU); cpu != "" {
		args = append([]string{"taskset", "-c", cpu}, args...)
	}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Env = env
	stdin, _ := p.cmd.StdinPipe() // bare goproxy serves until it closes
	stdout, _ := p.cmd.StdoutPipe()
	stderr, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.cmd.Wait()
	})
	p.pid = p.cmd.Process.Pid
	p.addr, p.admin = waitAddr(b, kind, stdout, stderr)
	if n, _ := strconv.Atoi(os.Getenv(envSubscribers)); n > 0 && kind == "robotsproxy" {
		subscribe(b, p.admin, n)
	}
	return p
}

// subscribe opens n streams of the live view at admin, each read to the
// end by a goroutine of this process, until the benchmark ends.
func subscribe(b *testing.B, admin string, n int) {
	for range n {
		resp, err := http.Get("http://" + admin + "/live/events")
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("live view stream: %v %v", resp, err)
		}
		go func() { _, _ = io.Copy(io.Discard, resp.Body) }()
		b.Cleanup(func() { resp.Body.Close() })
	}
}

// robotsproxyArgs builds the robotsproxy binary (once, unless envBinary
// names one) and returns its command line: the default configuration, the
// audit log in dir.
func robotsproxyArgs(b *testing.B, dir string, o *httptest.Server, intercept bool) []string {
	bin := buildRobotsproxy(b)
	u, _ := url.Parse(o.URL)
	cfg := fmt.Sprintf("log:\n  file: %s\nconnect:\n  ports: [%s]\n", filepath.Join(dir, "audit.log"), u.Port())
	writeFile(b, filepath.Join(dir, "robotsproxy.yaml"), []byte(cfg))
	args := []string{bin, "serve", "-config", filepath.Join(dir, "robotsproxy.yaml"),
		"-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0", "-allow-private"}
	if intercept {
		args = append(args, "-ca-cert", filepath.Join(dir, "ca.pem"), "-ca-key", filepath.Join(dir, "ca-key.pem"))
	}
	return args
}

var built struct {
	once sync.Once
	bin  string
	err  error
}

func buildRobotsproxy(b *testing.B) string {
	if bin := os.Getenv(envBinary); bin != "" {
		return bin
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "robotsproxy-cpubench-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "robotsproxy")
		cmd := exec.Command("go", "build", "-o", built.bin, "github.com/robotsproxy/robotsproxy")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		b.Fatal(built.err)
	}
	return built.bin
}

// waitAddr returns the proxy's address, the line "ADDR host:port" of
// bare goproxy or robotsproxy's "listening" log line for the proxy, and
// robotsproxy's admin listener's.
func waitAddr(b *testing.B, kind string, stdout, stderr io.Reader) (string, string) {
	addr := make(chan string, 1)
	var admin atomic.Value
	admin.Store("")
	scan := func(r io.Reader, parse func(string) string) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if a := parse(sc.Text()); a != "" {
				select {
				case addr <- a:
				default:
				}
			}
		}
	}
	if kind == "bare" {
		go scan(stdout, func(l string) string { a, _ := strings.CutPrefix(l, "ADDR "); return a })
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
	} else {
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		go scan(stderr, func(l string) string {
			var m struct{ Message, Listener, Addr string }
			if json.Unmarshal([]byte(l), &m) == nil && m.Message == "listening" && m.Listener == "admin" {
				admin.Store(m.Addr)
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Message == "listening" && m.Listener == "proxy" {
				return m.Addr
			}
			return ""
		})
	}
	select {
	case a := <-addr:
		for kind == "robotsproxy" && admin.Load() == "" {
			time.Sleep(time.Millisecond)
		}
		return a, admin.Load().(string)
	case <-time.After(30 * time.Second):
		b.Fatalf("%s: no address within 30s", kind)
		return "", ""
	}
}

// load sends b.N requests for target through p from concurrency
// connections (over HTTP/2, when h2, concurrency streams of one
// connection), after a warm-up, and reports the proxy's CPU time per
// request and the requests per second.
func load(b *testing.B, p *proxyProcess, target string, wantStatus int, h2 bool) {
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.addr}),
		MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency, MaxIdleConns: concurrency, ForceAttemptHTTP2: h2}
	if p.ca != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: p.ca.CertPool()}
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	run := func(n int64) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range concurrency {
			wg.Go(func() {
				for next.Add(1) <= n {
					if err := get(client, target, wantStatus); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run(20 * concurrency) // connections, tunnels, certificates and the robots.txt cache are warm
	if resp, err := client.Get(target); err == nil {
		resp.Body.Close()
		if h2 != (resp.ProtoMajor == 2) {
			b.Fatalf("the tunnel speaks %s, want HTTP/2: %v", resp.Proto, h2)
		}
	}
	cpu0, writes0 := cpuTime(b, p.pid), writeCalls(b, p.pid)
	b.ResetTimer()
	run(int64(b.N))
	b.StopTimer()
	cpu, writes := cpuTime(b, p.pid)-cpu0, writeCalls(b, p.pid)-writes0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "proxy-cpu-ns/op")
	b.ReportMetric(float64(writes)/float64(b.N), "write-calls/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func get(client *http.Client, target string, wantStatus int) error {
	req, _ := http.NewRequest("GET", target, nil)
	req.Header.Set("User-Agent", benchUA)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != wantStatus {
		return fmt.Errorf("%s: got status %d, want %d", target, resp.StatusCode, wantStatus)
	}
	return nil
}

// cpuTime is cpubench.CPUTime, failing b when there is none.
func cpuTime(b *testing.B, pid int) time.Duration {
	d, err := cpubench.CPUTime(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// writeCalls returns the number of write system calls process pid made
// (syscw in /proc/PID/io): socket writes, and the audit log's. Their
// difference per request between robotsproxy and bare goproxy is
// 1/(audit lines per write).
func writeCalls(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "syscw: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatalf("no syscw in /proc/%d/io", pid)
	return 0
}

func writeFile(b *testing.B, name string, data []byte) {
	if err := os.WriteFile(name, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// TestBareChild is BenchmarkProxyCPU's bare goproxy process: with envChild
// set it serves goproxy with robotsproxy's outbound transport (and, given
// a CA directory, intercepts CONNECT tunnels as robotsproxy does, serving
// HTTP/2 inside them to a client that offers it) on the address it
// prints, until its standard input closes.
func TestBareChild(t *testing.T) {
	caDir := os.Getenv(envChild)
	if caDir == "" {
		t.Skip("the child process of BenchmarkProxyCPU")
	}
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true})
	gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
	gp.KeepAcceptEncoding = true
	gp.AllowHTTP2 = true // h2 inside intercepted tunnels, when the client offers it
	if caDir != "-" {
		ca, err := mitm.LoadCA(filepath.Join(caDir, "ca.pem"), filepath.Join(caDir, "ca-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
			return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: certs.TLSConfig}, host
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gp}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("ADDR %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
}
