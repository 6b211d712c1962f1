package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Origin is an HTTPS origin that offers h2 by ALPN, serves robots at
// /robots.txt and "origin:PATH" elsewhere, and records the protocol of
// every other request.
type h2Origin struct {
	srv     *httptest.Server
	host    string
	port    int
	pemFile string

	mu     sync.Mutex
	protos map[string]int // request protocol -> requests, robots.txt excepted
}

func newH2Origin(t *testing.T, robots, name string) *h2Origin {
	t.Helper()
	o := &h2Origin{protos: map[string]int{}}
	o.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, robots)
			return
		}
		o.mu.Lock()
		o.protos[r.Proto]++
		o.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))
	o.port = o.srv.Listener.Addr().(*net.TCPAddr).Port
	o.host = net.JoinHostPort(name, strconv.Itoa(o.port))
	// A certificate for name, from a CA of its own that the proxy trusts.
	ca, err := mitm.NewCA(mitm.CAOptions{Name: "e2e h2 origin"})
	if err != nil {
		t.Fatal(err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certs.Get(o.host)
	if err != nil {
		t.Fatal(err)
	}
	o.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	o.srv.EnableHTTP2 = true
	o.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	o.srv.StartTLS()
	t.Cleanup(o.srv.Close)
	o.pemFile = filepath.Join(t.TempDir(), "origin-ca.pem")
	if err := os.WriteFile(o.pemFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return o
}

// h2Answer is one answer as a client saw it.
type h2Answer struct {
	status int
	reason string // X-Robotsproxy-Reason
	proto  string // the protocol of the answer, as the client names it
}

// curlH2 fetches u through the proxy with curl (--http2 or --http1.1),
// trusting caFile, and returns the answer.
func curlH2(t *testing.T, proxyAddr, caFile, u, version string) h2Answer {
	t.Helper()
	cmd := exec.Command("curl", "-sS", "--proxy", "http://"+proxyAddr, "--cacert", caFile, version,
		"-H", "User-Agent: ExampleBot/1.0", "-o", "/dev/null", "-D", "-", "-w", "VERSION %{http_version}\n", u)
	cmd.Env = clientEnv("")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %s %s: %v\n%s", version, u, err, out)
	}
	var a h2Answer
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "HTTP/"):
			_, _ = fmt.Sscanf(l[strings.IndexByte(l, ' ')+1:], "%d", &a.status)
		case strings.HasPrefix(strings.ToLower(l), "x-robotsproxy-reason:"):
			a.reason = strings.TrimSpace(l[len("x-robotsproxy-reason:"):])
		case strings.HasPrefix(l, "VERSION "):
			a.proto = strings.TrimPrefix(l, "VERSION ")
		}
	}
	return a
}

// goH2 fetches u through the proxy with Go's client, offering h2 inside
// the tunnel when h2, trusting ca.
func goH2(t *testing.T, p *proxyProcess, ca *testCA, u string, h2 bool) h2Answer {
	t.Helper()
	client := httpsClient(p.proxyURL("", ""), ca.pool, nil)
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = h2
	resp, _, err := getVia(client, u, "ExampleBot/1.0")
	if err != nil {
		t.Fatalf("Go client, h2 %v, %s: %v", h2, u, err)
	}
	return h2Answer{resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"), resp.Proto}
}

// needNode says why Node cannot run here, "" when it can.
func needNode() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed (.ci/run installs nodejs)"
	}
	return ""
}

// nodeH2 fetches the URLs at once through the proxy with Node's http2
// module (e2e/clients/h2.mjs), trusting caFile.
func nodeH2(t *testing.T, proxyAddr, caFile string, urls []string) []h2Answer {
	t.Helper()
	stdout, stderr, err := runClient(t, "node", []string{"NODE_EXTRA_CA_CERTS=" + caFile, "HTTPS_PROXY=http://" + proxyAddr},
		append([]string{filepath.Join("clients", "h2.mjs")}, urls...)...)
	if err != nil {
		t.Fatalf("node h2.mjs: %v\n%s", err, stderr)
	}
	var res []h2Answer
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Split(l, "\t")
		var a h2Answer
		if len(f) != 3 {
			t.Fatalf("node h2.mjs: %q\n%s", l, stderr)
		}
		if _, err := fmt.Sscanf(f[0], "%d", &a.status); err != nil {
			t.Fatalf("node h2.mjs: %q\n%s", l, stderr)
		}
		a.reason, a.proto = f[1], "2"
		res = append(res, a)
	}
	return res
}

// TestHTTP2Clients: through the binary with interception on, Go's client,
// curl --http2 and Node's http2 module speak HTTP/2 inside the tunnel
// (ALPN h2) and get the same decisions, refusals and audit lines as Go's
// client and curl over HTTP/1.1, but for the line's protocol field; the
// proxy speaks HTTP/2 to the origin, which offers it.
func TestHTTP2Clients(t *testing.T) {
	ca := initCA(t)
	o := newH2Origin(t, "User-agent: *\nDisallow: /*/private\n", "127.0.0.1")
	p := startProxyEnv(t, fmt.Sprintf("allow_private: true\nconnect:\n  ports: [%d]\n", o.port), trustEnv(t, o.pemFile),
		"-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	base := "https://" + o.host
	paths := []string{"/page", "/private/x"}
	want := []h2Answer{{status: 200}, {status: 403, reason: "rule"}}
	// run is one client's two requests, under /NAME/.
	type run struct {
		name, proto string // the protocol of its audit lines
		answers     []h2Answer
	}
	var runs []run
	for _, h2 := range []bool{false, true} {
		r := run{name: map[bool]string{false: "go-h1", true: "go-h2"}[h2], proto: map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]}
		for _, path := range paths {
			r.answers = append(r.answers, goH2(t, p, ca, base+"/"+r.name+path, h2))
		}
		runs = append(runs, r)
	}
	if why := needCommand("curl")(); why != "" {
		t.Log("curl skipped: " + why)
	} else {
		for _, version := range []string{"--http1.1", "--http2"} {
			r := run{name: "curl" + version, proto: map[string]string{"--http1.1": "HTTP/1.1", "--http2": "HTTP/2"}[version]}
			for _, path := range paths {
				r.answers = append(r.answers, curlH2(t, p.proxyAddr, ca.certFile, base+"/"+r.name+path, version))
			}
			runs = append(runs, r)
		}
	}
	if why := needNode(); why != "" {
		t.Log("node skipped: " + why)
	} else {
		runs = append(runs, run{name: "node", proto: "HTTP/2",
			answers: nodeH2(t, p.proxyAddr, ca.certFile, []string{base + "/node" + paths[0], base + "/node" + paths[1]})})
	}

	// How each client names the protocol of its answers.
	spoken := map[string][]string{"HTTP/1.1": {"HTTP/1.1", "1.1"}, "HTTP/2": {"HTTP/2.0", "2"}}
	lines := map[string]map[string]any{}
	for _, r := range runs {
		for i, path := range paths {
			a := r.answers[i]
			if a.status != want[i].status || a.reason != want[i].reason {
				t.Errorf("%s, %s: got %d %q, want %d %q", r.name, path, a.status, a.reason, want[i].status, want[i].reason)
			}
			if !slices.Contains(spoken[r.proto], a.proto) {
				t.Errorf("%s, %s: answered over %q, want %s", r.name, path, a.proto, r.proto)
			}
			u := base + "/" + r.name + path
			l := waitLine(t, p, u)
			lines[u] = l
			if l["protocol"] != r.proto || l["intercepted"] != true {
				t.Errorf("%s, %s: audit line %v, want protocol %s, intercepted", r.name, path, l, r.proto)
			}
		}
	}
	// The lines agree on everything that depends on the request, not on
	// its client or the time.
	for i, path := range paths {
		first := lines[base+"/"+runs[0].name+path]
		for _, r := range runs[1:] {
			l := lines[base+"/"+r.name+path]
			for _, f := range []string{"decision", "reason", "status", "bytes", "product_token", "token_source", "group", "rule", "rule_line", "access_result"} {
				if f == "bytes" && path == "/page" {
					continue // the origin's body names the path
				}
				if fmt.Sprint(l[f]) != fmt.Sprint(first[f]) {
					t.Errorf("%s, %s: %s is %v, want %v as %s's", r.name, path, f, l[f], first[f], runs[0].name)
				}
			}
		}
		if first["decision"] != []string{"allow", "deny"}[i] {
			t.Errorf("%s: audit line %v", path, first)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.protos["HTTP/1.1"] != 0 || o.protos["HTTP/2.0"] != len(runs) {
		t.Errorf("the origin got requests over %v, want HTTP/2.0 only, one per client", o.protos)
	}
}

// TestHTTP2Bounds: through the binary, an HTTP/2 connection inside an
// intercepted tunnel announces client.h2_max_concurrent_streams, refuses a
// header over client.max_header_bytes with 431 and its audit line, and is
// closed with GOAWAY ENHANCE_YOUR_CALM when its client resets streams
// faster than client.h2_max_resets_per_second (counted h2_resets).
func TestHTTP2Bounds(t *testing.T) {
	ca := initCA(t)
	o := newH2Origin(t, "User-agent: *\nAllow: /\n", "127.0.0.1")
	cfg := fmt.Sprintf("allow_private: true\nconnect:\n  ports: [%d]\nclient:\n  h2_max_concurrent_streams: 5\n  h2_max_resets_per_second: 10\n", o.port)
	p := startProxyEnv(t, cfg, trustEnv(t, o.pemFile), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)

	client := httpsClient(p.proxyURL("", ""), ca.pool, nil)
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	req, _ := http.NewRequest("GET", "https://"+o.host+"/big", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	req.Header.Set("X-Big", strings.Repeat("b", 48<<10))
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Proto != "HTTP/2.0" {
		t.Fatalf("a 48 KiB header over HTTP/2: %v %v, want 431", resp, err)
	}
	if l := waitLine(t, p, "https://"+o.host+"/big"); l["reason"] != "header-too-large" || l["protocol"] != "HTTP/2" {
		t.Errorf("audit line %v: want reason header-too-large, protocol HTTP/2", l)
	}

	c, err := net.Dial("tcp", p.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", o.host, o.host)
	if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1", NextProtos: []string{"h2"}})
	if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
		t.Fatalf("TLS: %v, ALPN %q, want h2", err, tc.ConnectionState().NegotiatedProtocol)
	}
	_, _ = io.WriteString(tc, http2.ClientPreface)
	fr := http2.NewFramer(tc, tc)
	_ = fr.WriteSettings()
	f, err := fr.ReadFrame()
	sf, ok := f.(*http2.SettingsFrame)
	if err != nil || !ok {
		t.Fatalf("the proxy's first frame: %v %v, want SETTINGS", f, err)
	}
	if v, _ := sf.Value(http2.SettingMaxConcurrentStreams); v != 5 {
		t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d, want client.h2_max_concurrent_streams (5)", v)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", o.host}, {":path", "/reset"}, {"user-agent", "ExampleBot/1.0"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	go func() {
		for id := uint32(1); id < 200; id += 2 { // 100 streams, each reset at once
			if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}) != nil ||
				fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	}()
	var away *http2.GoAwayFrame
	for away == nil {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		away, _ = f.(*http2.GoAwayFrame)
	}
	if away == nil || away.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("100 streams reset at once: GOAWAY %v, want ENHANCE_YOUR_CALM", away)
	}
	if n := scrapeMetrics(t, p.adminAddr)[`robotsproxy_client_refusals_total{cause="h2_resets"}`]; n != 1 {
		t.Errorf(`robotsproxy_client_refusals_total{cause="h2_resets"} = %v, want 1`, n)
	}
}

// TestCrawleeHTTP2: Crawlee's HttpCrawler (e2e/clients/crawl.mjs; its
// got-scraping offers h2 by default) crawling twelve pages of one origin,
// eight at once, through the binary, speaks HTTP/2 inside its tunnels and
// gets each request decided and audited on its own. It cannot keep one
// tunnel for the origin's concurrent requests, whatever the proxy offers:
// got-scraping builds new proxy agents for every request (its proxyHook),
// so each request opens its own CONNECT, and its HTTP/2 library one more
// to learn the protocol (per Crawlee session); the test records how many.
func TestCrawleeHTTP2(t *testing.T) {
	if _, err := os.Stat(filepath.Join("clients", "node_modules", "@crawlee", "http")); err != nil {
		t.Skip("Crawlee is not installed in e2e/clients: run npm ci --prefix e2e/clients (.ci/run does)")
	}
	if why := needNode(); why != "" {
		t.Skip(why)
	}
	ca := initCA(t)
	// By name: Crawlee's HTTP/2 library does not reuse a session for an
	// origin named by its IP address ("does not match server undefined").
	o := newH2Origin(t, "User-agent: *\nDisallow: /private\n", "localhost")
	p := startProxyEnv(t, fmt.Sprintf("allow_private: true\nconnect:\n  ports: [%d]\n", o.port), trustEnv(t, o.pemFile),
		"-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	var urls []string
	for i := range 12 {
		urls = append(urls, fmt.Sprintf("https://%s/page/%d", o.host, i))
	}
	urls = append(urls, "https://"+o.host+"/private/x")
	stdout, stderr, err := runClient(t, "node", []string{"NODE_EXTRA_CA_CERTS=" + ca.certFile, "HTTPS_PROXY=http://" + p.proxyAddr},
		append([]string{filepath.Join("clients", "crawl.mjs")}, urls...)...)
	t.Logf("crawlee:\n%s", stdout)
	if err != nil {
		t.Fatalf("node crawl.mjs: %v\n%s", err, stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 3 {
			got[f[2]] = f[0] + " " + f[1]
		}
	}
	for _, u := range urls {
		want := "200 2.0"
		if strings.HasSuffix(u, "/private/x") {
			want = "403 2.0"
		}
		if got[u] != want {
			t.Errorf("crawlee %s: got %q, want %q (status, HTTP version)", u, got[u], want)
		}
	}
	connects, inner := 0, 0
	for _, l := range p.auditLines(t, len(urls)) {
		switch {
		case l["method"] == "CONNECT":
			connects++
		case l["intercepted"] == true && l["protocol"] == "HTTP/2":
			inner++
		}
	}
	if inner != len(urls) {
		t.Errorf("%d audit lines of HTTP/2 requests inside tunnels, want %d", inner, len(urls))
	}
	t.Logf("Crawlee opened %d CONNECT tunnels for %d requests to one origin", connects, len(urls))
}
