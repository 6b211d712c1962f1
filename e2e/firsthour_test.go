package e2e

import (
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The first hour with robotsproxy: HTTPS to a port other than 443, and an
// origin whose certificate a private CA issued. Each refusal names the
// configuration key and the serve flag that lift it, in a header that
// curl -v shows and in the text; the flag then does.

// dataDirTrust returns a pool holding the CA serve keeps in dataDir.
func dataDirTrust(t *testing.T, dataDir string) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(dataDir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s/ca.pem: no certificate", dataDir)
	}
	return pool
}

// TestConnectPortsFlag: a CONNECT to a port outside connect.ports is
// refused with a hint naming connect.ports and -connect-ports (header
// and text, and curl -v shows the header); -connect-ports lets it
// through; a malformed list is a usage error.
func TestConnectPortsFlag(t *testing.T) {
	o := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	port := strconv.Itoa(o.port)
	dataDir := filepath.Join(t.TempDir(), "state")
	env := trustEnv(t, o.pemFile)
	p := startServeIn(t, t.TempDir(), env, "-data-dir", dataDir)

	resp, body := rawConnect(t, p.proxyAddr, o.host, nil)
	hint := resp.Header.Get("X-Robotsproxy-Hint")
	for _, want := range []string{"connect.ports", "-connect-ports 443," + port} {
		if !strings.Contains(hint, want) || !strings.Contains(string(body), want) {
			t.Errorf("CONNECT %s: hint %q and body %q, want both to name %q", o.host, hint, body, want)
		}
	}
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Robotsproxy-Reason") != "connect-port" {
		t.Errorf("CONNECT %s: %d reason %q, want 403 connect-port", o.host, resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
	}
	t.Run("curl -v", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("SKIPPED: curl not found (.ci/run installs it)")
		}
		_, code, stderr := curlHTTPS(t, p.proxyAddr, "https://"+o.host+"/page", "-v", "--cacert", filepath.Join(dataDir, "ca.pem"))
		if code == 0 || !strings.Contains(stderr, "X-Robotsproxy-Hint: the operator allows CONNECT to port "+port+" with connect.ports") ||
			!strings.Contains(stderr, "-connect-ports 443,"+port) {
			t.Errorf("curl -v through the proxy to port %s: exit %d, stderr:\n%s\nwant the hint header naming connect.ports and -connect-ports", port, code, stderr)
		}
	})
	p.stop(t)

	p = startServeIn(t, t.TempDir(), env, "-data-dir", dataDir, "-connect-ports", "443,"+port)
	client := httpsClient(p.proxyURL("", ""), dataDirTrust(t, dataDir), nil)
	defer client.Transport.(*http.Transport).CloseIdleConnections()
	resp, body, err := getVia(client, "https://"+o.host+"/page", "ExampleBot/1.0")
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "origin:/page" {
		t.Fatalf("with -connect-ports 443,%s: %v %v %q, want 200 from the origin", port, err, resp, body)
	}
	p.stop(t)

	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ list, want string }{
		{"443,x", "-connect-ports"}, {"", "-connect-ports"}, {"443,70000", "connect.ports"},
	} {
		_, stderr, code := runBinary(t, "", "serve", "-check-config", "-config", empty, "-connect-ports", bad.list)
		if code != 2 || !strings.Contains(stderr, bad.want) {
			t.Errorf("-connect-ports %q: exit %d, stderr %q; want 2 naming %s", bad.list, code, stderr, bad.want)
		}
	}
}

// TestUpstreamCAFile: an origin whose certificate the proxy's roots do
// not cover makes robots.txt unreachable (tls); the refusal names
// upstream.ca_file and -upstream-ca-file; with either, read at start, the
// origin's CA is trusted beside the system roots, and requests go
// through. Changing the key on reload says a restart is needed.
func TestUpstreamCAFile(t *testing.T) {
	o := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	port := strconv.Itoa(o.port)
	dataDir := filepath.Join(t.TempDir(), "state")
	env := trustEnv(t, initCA(t).certFile) // system roots: an unrelated CA only
	get := func(p *proxyProcess) (*http.Response, string) {
		t.Helper()
		client := httpsClient(p.proxyURL("", ""), dataDirTrust(t, dataDir), nil)
		defer client.Transport.(*http.Transport).CloseIdleConnections()
		resp, body, err := getVia(client, "https://"+o.host+"/page", "ExampleBot/1.0")
		if err != nil {
			t.Fatalf("GET through the proxy: %v", err)
		}
		return resp, string(body)
	}

	p := startServeIn(t, t.TempDir(), env, "-data-dir", dataDir, "-connect-ports", "443,"+port)
	resp, body := get(p)
	hint := resp.Header.Get("X-Robotsproxy-Hint")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Robotsproxy-Reason") != "unreachable" ||
		resp.Header.Get("X-Robotsproxy-Unreachable") != "tls" {
		t.Errorf("untrusted origin: %d reason %q cause %q, want 403 unreachable tls", resp.StatusCode,
			resp.Header.Get("X-Robotsproxy-Reason"), resp.Header.Get("X-Robotsproxy-Unreachable"))
	}
	for _, want := range []string{"upstream.ca_file", "-upstream-ca-file", "reload (SIGHUP)"} {
		if !strings.Contains(hint, want) || !strings.Contains(body, want) {
			t.Errorf("untrusted origin: hint %q and body %q, want both to name %q", hint, body, want)
		}
	}
	p.stop(t)

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("upstream:\n  ca_file: "+o.pemFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"upstream.ca_file":  {"-config", cfg},
		"-upstream-ca-file": {"-upstream-ca-file", o.pemFile},
	} {
		p := startServeIn(t, t.TempDir(), env, append(args, "-data-dir", dataDir, "-connect-ports", "443,"+port)...)
		if resp, body := get(p); resp.StatusCode != http.StatusOK || body != "origin:/page" {
			t.Errorf("with %s: %d %q, want 200 from the origin", name, resp.StatusCode, body)
		}
		p.stop(t)
	}

	_, stderr, code := runBinary(t, "", "serve", "-listen", "127.0.0.1:0", "-admin-listen", "", "-upstream-ca-file", cfg)
	if code != 2 || !strings.Contains(stderr, "upstream.ca_file") || !strings.Contains(stderr, cfg) {
		t.Errorf("-upstream-ca-file naming a file without certificates: exit %d, stderr %q; want 2 naming the key and the file", code, stderr)
	}

	rp := startReloadable(t, "")
	_, restart := rp.reload(t, "upstream:\n  ca_file: "+o.pemFile+"\n")
	if keys, _ := restart["keys"].([]any); len(keys) != 1 || keys[0] != "upstream.ca_file" {
		t.Errorf("reload changing upstream.ca_file: restart-only keys %v, want [upstream.ca_file]", restart["keys"])
	}
}
