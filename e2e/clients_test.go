package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// This file runs each recipe of docs/clients.md through the binary on its
// default configuration (no CA given: serve creates one in its data
// directory on first start; no flag but -allow-private, and the ephemeral
// listen addresses) against an HTTPS origin. Each client, trusting the CA
// as its recipe says, gets 403 for a disallowed path, which never reaches
// the origin, and the page of an allowed one; the same client not trusting
// the CA fails with a TLS error, and the origin sees nothing.

// recipeRobots disallows everything to GPTBot and /private to every other
// crawler.
const recipeRobots = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"

// recipeOrigin is an HTTPS origin at https://HOST/ (port 443 when it can
// be bound, as on the web), with a certificate from its own CA, which the
// proxy trusts through SSL_CERT_FILE. It counts the requests for each
// path, the proxy's robots.txt fetches excepted.
type recipeOrigin struct {
	base   string // https://127.0.0.N or https://127.0.0.1:PORT
	port   int
	caFile string
	mu     sync.Mutex
	hits   map[string]int
}

func newRecipeOrigin(t *testing.T) *recipeOrigin {
	t.Helper()
	o := &recipeOrigin{hits: map[string]int{}}
	ln, host := listen443(t)
	ca, err := mitm.NewCA(mitm.CAOptions{Name: "e2e origin"})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certs.Get(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	o.caFile = filepath.Join(t.TempDir(), "origin-ca.pem")
	if err := os.WriteFile(o.caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" && strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
			_, _ = io.WriteString(w, recipeRobots)
			return
		}
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.mu.Unlock()
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	o.port = ln.Addr().(*net.TCPAddr).Port
	o.base = "https://" + host
	return o
}

// listen443 listens on port 443 of a random 127.0.0.N (so that tests run
// at once do not collide), or, when that port cannot be bound (no
// privilege), on an ephemeral port of 127.0.0.1; host is what a URL names.
func listen443(t *testing.T) (net.Listener, string) {
	for range 20 {
		ip := fmt.Sprintf("127.0.%d.%d", rand.IntN(256), 2+rand.IntN(250))
		if ln, err := net.Listen("tcp", ip+":443"); err == nil {
			return ln, ip
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("port 443 could not be bound: the origin is at %s, and the proxy's connect.ports names it", ln.Addr())
	return ln, ln.Addr().String()
}

func (o *recipeOrigin) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// recipeProxy runs serve on the default configuration with a fresh data
// directory, trusting the origin's CA, and returns it with the CA file
// serve created.
func recipeProxy(t *testing.T, o *recipeOrigin) (p *proxyProcess, caFile string, env []string) {
	t.Helper()
	env = []string{"XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state")}
	var args []string
	if o.port != 443 { // see listen443
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, fmt.Appendf(nil, "connect:\n  ports: [%d]\n", o.port), 0o600); err != nil {
			t.Fatal(err)
		}
		args = []string{"-config", cfg}
	}
	p = startServeIn(t, t.TempDir(), append(env, trustEnv(t, o.caFile)...), args...)
	return p, filepath.Join(strings.TrimPrefix(env[0], "XDG_STATE_HOME="), "robotsproxy", mitm.DataDirCert), env
}

// TestClientRecipes runs every recipe of docs/clients.md, trusting the CA
// and not, against one proxy on its default configuration.
func TestClientRecipes(t *testing.T) {
	o := newRecipeOrigin(t)
	p, caFile, env := recipeProxy(t, o)
	checkCreatedCA(t, p, caFile, env)
	proxyURL := "http://" + p.proxyAddr

	clients := []struct {
		name string
		// absent says why the client cannot run here ("" when it can).
		absent func() string
		// get fetches path with the recipe, trusting the CA or not.
		get func(t *testing.T, path, ua string, trust bool) recipeOutcome
	}{
		{"curl", needCommand("curl"), func(t *testing.T, path, ua string, trust bool) recipeOutcome {
			args := []string{"-sS", "-o", "/dev/null", "-w", "%{http_code}", "-A", ua, "--proxy", proxyURL}
			if trust {
				args = append(args, "--cacert", caFile)
			}
			out, errOut, err := runClient(t, "curl", clientEnv(""), append(args, o.base+path)...)
			if err != nil {
				return recipeOutcome{err: errOut}
			}
			var status int
			fmt.Sscan(out, &status)
			return recipeOutcome{status: status}
		}},
		{"python requests", needPython("requests"), func(t *testing.T, path, ua string, trust bool) recipeOutcome {
			cenv := append(clientEnv(""), "HTTPS_PROXY="+proxyURL)
			if trust {
				cenv = append(cenv, "REQUESTS_CA_BUNDLE="+caFile)
			}
			return parseOutcome(runClient(t, pythonWith("requests"), cenv, "-c", pythonRequestsRecipe, o.base+path, ua))
		}},
		{"go", func() string { return "" }, func(t *testing.T, path, ua string, trust bool) recipeOutcome {
			status, err := goRecipe(proxyURL, caFile, trust, o.base+path, ua)
			if err != nil {
				return recipeOutcome{err: err.Error()}
			}
			return recipeOutcome{status: status}
		}},
		{"scrapy", needCommand("scrapy"), func(t *testing.T, path, ua string, trust bool) recipeOutcome {
			// Scrapy verifies no certificate by default, so the recipe
			// verifies (BrowserLikeContextFactory) and trusts the CA
			// through SSL_CERT_FILE.
			cenv := append(clientEnv(""), "HTTPS_PROXY="+proxyURL)
			if trust {
				cenv = append(cenv, "SSL_CERT_FILE="+caFile)
			} else {
				cenv = append(cenv, "SSL_CERT_FILE="+o.caFile) // trusts something, not the proxy's CA
			}
			return parseOutcome(runClient(t, "scrapy", cenv, "runspider", filepath.Join("clients", "spider.py"), "-a", "urls="+o.base+path, "-s", "USER_AGENT="+ua,
				"-s", "DOWNLOADER_CLIENTCONTEXTFACTORY=scrapy.core.downloader.contextfactory.BrowserLikeContextFactory"))
		}},
		{"node", needNodeUndici, func(t *testing.T, path, ua string, trust bool) recipeOutcome {
			cenv := append(clientEnv(""), "HTTPS_PROXY="+proxyURL)
			if trust {
				cenv = append(cenv, "NODE_EXTRA_CA_CERTS="+caFile)
			}
			return parseOutcome(runClient(t, "node", append(cenv, "USER_AGENT="+ua), filepath.Join("clients", "fetch.mjs"), o.base+path))
		}},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			if why := c.absent(); why != "" {
				t.Skip(why)
			}
			slug := strings.ReplaceAll(c.name, " ", "-")
			ua := "ExampleBot/1.0"
			for _, tt := range []struct {
				path, ua string
				trust    bool
				want     int // 0: a TLS failure
			}{
				{"/page-" + slug, ua, true, 200},
				{"/private/" + slug, ua, true, 403},
				// The crawler is named in the requests only (Python
				// requests and Go send no crawler on CONNECT).
				{"/action/x-" + slug, "Mozilla/5.0 (compatible; GPTBot/1.0)", true, 403},
				{"/untrusted-" + slug, ua, false, 0},
			} {
				got := c.get(t, tt.path, tt.ua, tt.trust)
				if got.status != tt.want {
					t.Errorf("%s %s%s (trusting the CA: %v): got status %d (%s), want %d (0: a TLS error)", c.name, o.base, tt.path, tt.trust, got.status, got.err, tt.want)
				}
				if low := strings.ToLower(got.err); tt.want == 0 && !strings.Contains(low, "cert") && !strings.Contains(low, "ssl") {
					t.Errorf("%s %s (not trusting the CA): failed with %q, want a TLS certificate error", c.name, tt.path, got.err)
				}
				if n, want := o.hit(tt.path), map[int]int{200: 1}[tt.want]; n != want {
					t.Errorf("%s %s: the origin saw it %d times, want %d", c.name, tt.path, n, want)
				}
			}
		})
	}
	checkUntrustedLog(t, p, caFile)
}

// checkCreatedCA checks that serve created its CA in the data directory
// (key 0600, directory 0700) and that the startup line and "ca show" give
// its path, its SHA-256 fingerprint and how to trust it.
func checkCreatedCA(t *testing.T, p *proxyProcess, caFile string, env []string) {
	t.Helper()
	certPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("serve on the defaults did not create its CA at %s: %v", caFile, err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("%s: no PEM", caFile)
	}
	sum := sha256.Sum256(block.Bytes)
	fp := strings.ToUpper(strings.Join(strings.Split(fmt.Sprintf("% x", sum[:]), " "), ":"))
	for path, want := range map[string]os.FileMode{filepath.Dir(caFile): 0o700, filepath.Join(filepath.Dir(caFile), mitm.DataDirKey): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %v", path, err, want)
		}
	}
	_, m := startupLine(t, p)
	if !strings.Contains(p.cmd.String(), "-config") && m["config"] != "none (built-in defaults)" {
		t.Errorf("startup line config: got %v, want the built-in defaults", m["config"])
	}
	https, _ := m["https"].(map[string]any)
	want := map[string]any{"mitm_mode": "intercept", "ca_cert": caFile, "ca_source": "data_dir (created)", "sha256": fp}
	for k, v := range want {
		if https[k] != v {
			t.Errorf("startup line https.%s: got %v, want %v", k, https[k], v)
		}
	}
	if trust, _ := https["trust"].(string); !strings.Contains(trust, "curl --cacert "+caFile) {
		t.Errorf("startup line https.trust %q does not say curl --cacert %s", trust, caFile)
	}
	out, errOut, err := runClient(t, binary, append(os.Environ(), env...), "ca", "show")
	if err != nil {
		t.Fatalf("ca show: %v\n%s", err, errOut)
	}
	for _, want := range []string{"CA certificate: " + caFile, "sha256:         " + fp, "curl --cacert " + caFile,
		"REQUESTS_CA_BUNDLE=" + caFile, "HTTPERROR_ALLOWED_CODES", "NODE_EXTRA_CA_CERTS=" + caFile, "EnvHttpProxyAgent", "http.ProxyURL"} {
		if !strings.Contains(out, want) {
			t.Errorf("ca show does not say %q:\n%s", want, out)
		}
	}
}

// checkUntrustedLog: the clients that did not trust the CA, all from
// 127.0.0.1 within a minute, got one log line naming the client and the
// fix; every refusal was recognised (goproxy's own handshake warning was
// never printed).
func checkUntrustedLog(t *testing.T, p *proxyProcess, caFile string) {
	t.Helper()
	var lines []string
	deadline := time.Now().Add(5 * time.Second)
	for len(lines) == 0 && time.Now().Before(deadline) {
		lines = nil
		for _, l := range p.stderr.lines() {
			if strings.Contains(l, "refused the interception certificate") {
				lines = append(lines, l)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(lines) == 0 {
		t.Fatal("no line about clients refusing the CA, want one")
	}
	// One line per client address per minute: every client here is
	// 127.0.0.1, and the recipes take more than a minute on a busy
	// machine. The lines' times are in whole seconds: a minute apart
	// less one second at most.
	var last time.Time
	for i, l := range lines {
		var m struct{ Time time.Time }
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Time.IsZero() {
			t.Fatalf("a line about a client refusing the CA has no time: %v: %s", err, l)
		}
		if i > 0 && m.Time.Sub(last) < time.Minute-time.Second {
			t.Fatalf("%d lines about clients refusing the CA, %v apart: want at most one a minute per client address:\n%s", len(lines), m.Time.Sub(last), strings.Join(lines, "\n"))
		}
		last = m.Time
	}
	for _, want := range []string{`"client":"127.0.0.1"`, `"fix":"curl --cacert ` + caFile, `"level":"warn"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line about a client refusing the CA does not say %s: %s", want, lines[0])
		}
	}
	if strings.Contains(p.stderr.String(), "Cannot handshake client") {
		t.Errorf("a client's refusal of the CA was not recognised; stderr:\n%s", p.stderr)
	}
}

// pythonRequestsRecipe is the Python requests recipe: HTTPS_PROXY and
// REQUESTS_CA_BUNDLE come from the environment. It prints the status, or
// "error<TAB>reason".
const pythonRequestsRecipe = `
import sys, requests
try:
    r = requests.get(sys.argv[1], headers={"User-Agent": sys.argv[2]}, timeout=60)
    print(r.status_code)
except requests.exceptions.RequestException as e:
    print("error\t" + repr(e))
`

// goRecipe is the Go recipe: the proxy set with http.ProxyURL (the
// environment's proxy is never used for loopback targets) and the CA
// added to the roots.
func goRecipe(proxy, caFile string, trust bool, target, ua string) (int, error) {
	u, err := url.Parse(proxy)
	if err != nil {
		return 0, err
	}
	var roots *x509.CertPool // nil: the system roots
	if trust {
		pemBytes, err := os.ReadFile(caFile)
		if err != nil {
			return 0, err
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pemBytes) {
			return 0, fmt.Errorf("no certificate in %s", caFile)
		}
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", ua)
	resp, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// runClient runs a client program with env and returns its stdout and
// stderr; err is set when it could not run or exited non-zero.
func runClient(t *testing.T, name string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// parseOutcome reads a recipe script's one line: a status, or
// "error<TAB>reason".
func parseOutcome(stdout, stderr string, err error) recipeOutcome {
	line := strings.TrimSpace(stdout)
	var status int
	if _, scanErr := fmt.Sscan(line, &status); scanErr == nil && err == nil {
		return recipeOutcome{status: status}
	}
	return recipeOutcome{err: fmt.Sprintf("%s %s %v", line, stderr, err)}
}

// recipeOutcome is what a client got: a status, or 0 and why it failed.
type recipeOutcome struct {
	status int
	err    string
}

func needCommand(name string) func() string {
	return func() string {
		if _, err := exec.LookPath(name); err != nil {
			pkg := map[string]string{"scrapy": "python3-scrapy"}[name]
			if pkg == "" {
				pkg = name
			}
			return name + " is not installed (.ci/run installs it: apt-get install " + pkg + ")"
		}
		return ""
	}
}

func needPython(module string) func() string {
	return func() string {
		if pythonWith(module) == "" {
			return "python3 with " + module + " is not installed (.ci/run installs it: apt-get install python3-" + module + ")"
		}
		return ""
	}
}

// pythonWith returns the first python3 that imports module: the one on
// PATH, else Debian's (where apt-get installs python3-MODULE when PATH's
// python3 is another, such as pyenv's); "" when neither does.
func pythonWith(module string) string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import "+module).Run() == nil {
			return py
		}
	}
	return ""
}

func needNodeUndici() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed (.ci/run installs nodejs)"
	}
	if _, err := os.Stat(filepath.Join("clients", "node_modules", "undici")); err != nil {
		return "undici is not installed in e2e/clients: run npm ci --prefix e2e/clients (.ci/run does)"
	}
	return ""
}
