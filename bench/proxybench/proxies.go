package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The proxies proxybench compares.
const (
	kindRobotsproxy = "robotsproxy"
	kindBare        = "bare"
	kindSmokescreen = "smokescreen"
	kindSquid       = "squid"
	// kindBefore is robotsproxy from another binary (-before), started
	// as robotsproxy is: an earlier build, measured in the same rounds.
	kindBefore = "before"
)

// kindNames are the proxies' names in the tables.
var kindNames = map[string]string{
	kindRobotsproxy: "robotsproxy",
	kindBare:        "bare goproxy",
	kindSmokescreen: "smokescreen " + smokescreenVersion,
	kindSquid:       "Squid",
	kindBefore:      "robotsproxy before",
}

// env is what every proxy of a run shares: the binaries, the origins and
// the CA of intercepted tunnels.
type env struct {
	dir     string // the run's files
	bins    binaries
	origins *origins
	caCert  string // PEM files of the CA (robotsproxy and bare intercept with it)
	caKey   string
	// extra is YAML appended to a robotsproxy kind's configuration.
	extra map[string]string
}

// proxySpec is how one proxy is started.
type proxySpec struct {
	kind string
	// cpus, when set, is the CPU list the proxy is pinned to (taskset -c).
	cpus string
	// wrap is a command the proxy runs under (valgrind ...), nil for none.
	wrap []string
	env  []string
	// slow gives robotsproxy's robots.txt fetches long timeouts, for a
	// proxy run under valgrind.
	slow bool
}

// start starts the proxy of s in front of e's origins, ready to serve:
// its address answers and its first requests (robots.txt fetched) are
// made by the caller's warm-up.
func (e *env) start(s proxySpec) (*process, error) {
	dir := filepath.Join(e.dir, fmt.Sprintf("%s-%d", s.kind, time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o777); err != nil { // Squid drops to its own user
		return nil, err
	}
	var args, extraEnv []string
	var addr func(string) string
	known := ""
	switch s.kind {
	case kindRobotsproxy, kindBefore:
		cfg := fmt.Sprintf("log:\n  file: %s\nconnect:\n  ports: [%d]\n", filepath.Join(dir, "audit.log"), e.origins.tlsPort())
		if s.slow {
			cfg += "robots:\n  connect_timeout: 2m\n  timeout: 5m\n"
		}
		cfg += e.extra[s.kind]
		if err := os.WriteFile(filepath.Join(dir, "robotsproxy.yaml"), []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		bin := e.bins.robotsproxy
		if s.kind == kindBefore {
			bin = e.bins.before
		}
		args = []string{bin, "serve", "-config", filepath.Join(dir, "robotsproxy.yaml"),
			"-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0", "-allow-private",
			"-ca-cert", e.caCert, "-ca-key", e.caKey}
		// Its state (and nothing of the user's) in the run's folder.
		extraEnv = []string{"XDG_STATE_HOME=" + dir, "XDG_CACHE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
		addr = robotsproxyAddr
	case kindBare:
		args = []string{e.bins.bare, "-listen", "127.0.0.1:0", "-ca-cert", e.caCert, "-ca-key", e.caKey}
		addr = func(l string) string {
			if a, ok := strings.CutPrefix(l, "ADDR "); ok {
				return a
			}
			return ""
		}
	case kindSmokescreen:
		a, err := freePort()
		if err != nil {
			return nil, err
		}
		_, port, _ := strings.Cut(a, ":")
		// Its canonical log line per request goes to stderr, which is
		// copied to a file: its counterpart of the audit log.
		args = []string{e.bins.smokescreen, "--listen-ip", "127.0.0.1", "--listen-port", port,
			"--allow-range", "127.0.0.0/8"}
		known = a
	case kindSquid:
		a, err := freePort()
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, "squid.conf")
		if err := os.WriteFile(conf, []byte(squidConfig(a, dir)), 0o644); err != nil {
			return nil, err
		}
		args = []string{e.bins.squid, "-N", "-f", conf}
		known = a
	default:
		return nil, fmt.Errorf("unknown proxy %q", s.kind)
	}
	if known != "" {
		addr = func(string) string { return "" }
	}
	if s.wrap != nil {
		args = append(append([]string(nil), s.wrap...), args...)
	}
	if s.cpus != "" {
		args = append([]string{"taskset", "-c", s.cpus}, args...)
	}
	var env []string
	if e.origins.certFile != "" { // the proxies trust the test origin as a system root
		env = append(env, "SSL_CERT_FILE="+e.origins.certFile)
	}
	env = append(append(env, extraEnv...), s.env...)
	if known != "" {
		p, err := startProcess(s.kind, args, env, dir, func(string) string { return "" }, known)
		if err != nil {
			return nil, err
		}
		if err := waitListening(p, known, 120*time.Second); err != nil {
			p.stop()
			return nil, err
		}
		return p, nil
	}
	return startProcess(s.kind, args, env, dir, addr, "")
}

// robotsproxyAddr parses the proxy listener's address from robotsproxy's
// "listening" log line.
func robotsproxyAddr(l string) string {
	var m struct{ Message, Listener, Addr string }
	if json.Unmarshal([]byte(l), &m) == nil && m.Message == "listening" && m.Listener == "proxy" {
		return m.Addr
	}
	return ""
}

// squidConfig is the configuration of a Squid that is a plain forward
// proxy on addr (host:port): one worker, the access log on (a file in
// dir, as robotsproxy's audit log), no cache, every client allowed (it
// listens on loopback only).
func squidConfig(addr, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "http_port %s\n", addr)
	b.WriteString("workers 1\n")
	b.WriteString("cache deny all\n")
	b.WriteString("cache_mem 0 MB\n")
	fmt.Fprintf(&b, "access_log stdio:%s squid\n", filepath.Join(dir, "access.log"))
	fmt.Fprintf(&b, "cache_log %s\n", filepath.Join(dir, "cache.log"))
	b.WriteString("cache_store_log none\n")
	fmt.Fprintf(&b, "pid_filename %s\n", filepath.Join(dir, "squid.pid"))
	fmt.Fprintf(&b, "coredump_dir %s\n", dir)
	b.WriteString("http_access allow all\n")
	b.WriteString("visible_hostname proxybench\n")
	b.WriteString("shutdown_lifetime 0 seconds\n")
	b.WriteString("max_filedescriptors 4096\n")
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		b.WriteString("cache_effective_user proxy\n") // Squid will not serve as root
	}
	return b.String()
}

// squidVersion is what squid -v says of its version ("5.7"), "" when it
// cannot tell.
func squidVersion(bin string) string {
	out, err := exec.Command(bin, "-v").Output()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(out), "\n")
	_, v, _ := strings.Cut(first, "Version ")
	return strings.TrimSpace(v)
}

// pinArgs is the CPU list of a proxy pinned to the last CPU of n, "" when
// there is only one.
func pinArgs(n int) string {
	if n < 2 {
		return ""
	}
	return strconv.Itoa(n - 1)
}
