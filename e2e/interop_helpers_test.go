package e2e

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This file runs the Web Bot Auth verifiers of e2e/interop (npm packages
// nobody on this project wrote) as origins: origin-web-bot-auth.mjs
// (Cloudflare's web-bot-auth) and origin-http-message-signatures.mjs
// (http-message-signatures, an independent RFC 9421 implementation).
// Each answers 200 with a JSON verdict when the request's signature
// verifies, else 401 with the verifier's error; docs/interop.md says
// what each checks.

// verifierScripts are the origin scripts, one per verifier library.
var verifierScripts = []string{"origin-web-bot-auth.mjs", "origin-http-message-signatures.mjs"}

// interopDir returns e2e/interop, skipping the test when node or the
// installed packages ("npm ci --prefix e2e/interop") are missing.
func interopDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIPPED: node is not installed (the interop origins run on Node.js; .ci/run installs it)")
	}
	dir, err := filepath.Abs("interop")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"web-bot-auth", "http-message-signatures", "structured-headers"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Skipf("SKIPPED: e2e/interop/node_modules/%s is missing: run npm ci --prefix e2e/interop", pkg)
		}
	}
	return dir
}

// nodeOrigin is a running interop origin.
type nodeOrigin struct {
	script string
	host   string // 127.0.0.1:port
	tls    bool
	stderr *syncBuffer
}

// startNodeOrigin runs script with args (see e2e/interop/common.mjs) on
// an ephemeral loopback port and waits for its "listening" line.
func startNodeOrigin(t *testing.T, dir, script string, args ...string) *nodeOrigin {
	t.Helper()
	cmd := exec.Command("node", append([]string{script, "--port", "0"}, args...)...)
	cmd.Dir = dir
	o := &nodeOrigin{script: script, stderr: &syncBuffer{}}
	cmd.Stderr = o.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		var m struct {
			Listening string
			TLS       bool
		}
		if !ok || json.Unmarshal([]byte(l), &m) != nil || m.Listening == "" {
			t.Fatalf("node %s: no listening line (got %q); stderr:\n%s", script, l, o.stderr)
		}
		o.host, o.tls = m.Listening, m.TLS
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s: not listening within 30s; stderr:\n%s", script, o.stderr)
	}
	return o
}

// base is the origin's URL without a path.
func (o *nodeOrigin) base() string {
	if o.tls {
		return "https://" + o.host
	}
	return "http://" + o.host
}

// verdict is an interop origin's answer.
type verdict struct {
	Status        int               `json:"-"`
	Verifier      string            `json:"verifier"`
	OK            bool              `json:"ok"`
	Error         string            `json:"error"`
	Keyid         string            `json:"keyid"`
	Label         string            `json:"label"`
	Tag           string            `json:"tag"`
	Nonce         string            `json:"nonce"`
	Created       float64           `json:"created"`
	Expires       float64           `json:"expires"`
	Components    []string          `json:"components"`
	ContentDigest string            `json:"content_digest"`
	Seen          map[string]string `json:"seen"`
}

func (v verdict) String() string {
	if v.OK {
		return fmt.Sprintf("%d %s accepted (label %s, keyid %s, components %v)", v.Status, v.Verifier, v.Label, v.Keyid, v.Components)
	}
	return fmt.Sprintf("%d %s rejected: %s", v.Status, v.Verifier, v.Error)
}

// readVerdict decodes an origin's answer; a 200 must say ok, a 401 not.
func readVerdict(t *testing.T, resp *http.Response) verdict {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v verdict
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("origin answered %d %q: not a verdict: %v", resp.StatusCode, body, err)
	}
	v.Status = resp.StatusCode
	if (v.Status == 200) != v.OK || (v.Status != 200 && v.Status != 401) {
		t.Fatalf("origin answered %d with ok=%v: %s", v.Status, v.OK, body)
	}
	return v
}

// signedHeaders are the signature headers an origin saw, to send again.
func (v verdict) signedHeaders() http.Header {
	h := http.Header{}
	for _, k := range []string{"signature", "signature-input", "signature-agent", "content-digest"} {
		if s := v.Seen[k]; s != "" {
			h.Set(k, s)
		}
	}
	return h
}

// sendDirect sends method u with header and body straight to an origin
// (no proxy), with client (nil: plain HTTP).
func sendDirect(t *testing.T, client *http.Client, method, u string, header http.Header, body string) verdict {
	t.Helper()
	if client == nil {
		client = &http.Client{Timeout: time.Minute}
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return readVerdict(t, resp)
}

// nodeSign signs method u with the library signer ("web-bot-auth" or
// "http-message-signatures", see e2e/interop/sign.mjs) and keyFile (a
// PKCS#8 PEM), valid for expiresIn seconds.
func nodeSign(t *testing.T, dir, signer, keyFile, method, u string, expiresIn int) http.Header {
	t.Helper()
	cmd := exec.Command("node", "sign.mjs", "--key", keyFile, "--url", u, "--method", method,
		"--signer", signer, "--expires-in", fmt.Sprint(expiresIn))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sign.mjs --signer %s: %v; stderr:\n%s", signer, err, stderr.String())
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("node sign.mjs: %q: %v", out, err)
	}
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// writeEd25519 writes a new Ed25519 key pair into dir as private.pem
// (PKCS#8) and public.pem (PKIX) and returns their paths.
func writeEd25519(t *testing.T, dir string) (private, public string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	private, public = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem")
	writeBlock(t, private, "PRIVATE KEY", privDER)
	writeBlock(t, public, "PUBLIC KEY", pubDER)
	return private, public
}

func writeBlock(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// originCert writes a self-signed ECDSA certificate for 127.0.0.1 and its
// key into dir, for a TLS interop origin: cert is also what the proxy
// must trust (trustEnv).
func originCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "interop origin"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "origin-cert.pem"), filepath.Join(dir, "origin-key.pem")
	writeBlock(t, cert, "CERTIFICATE", der)
	writeBlock(t, key, "PRIVATE KEY", keyDER)
	return cert, key
}

// pathRewriter is a hop between the proxy and an origin that forwards
// every request for from as a request for to, Host kept: it tampers with
// a request after it was signed.
func pathRewriter(t *testing.T, origin *nodeOrigin, from, to string) string {
	t.Helper()
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", origin.host
		if r.Out.URL.Path == from {
			r.Out.URL.Path = to
		}
		r.Out.Host = r.In.Host
	}}
	hop := httptest.NewServer(rp)
	t.Cleanup(hop.Close)
	return hop.Listener.Addr().String()
}
