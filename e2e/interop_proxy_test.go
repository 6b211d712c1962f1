package e2e

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// interopProxyConfig signs every request with the key in keyDir under the
// label "interop", valid for 3 s, and lets CONNECT reach tlsPorts.
func interopProxyConfig(keyDir string, tlsPorts ...int) string {
	return fmt.Sprintf(`allow_private: true
connect:
  ports: %s
signing:
  enabled: true
  label: interop
  expires: 3s
  identities:
    - default: true
      keys: [%q]
      signature_agent: https://bot.example/keys
`, strings.ReplaceAll(fmt.Sprint(tlsPorts), " ", ", "), keyDir)
}

// signedVia sends method u with body through client (a client of the
// proxy) as InteropBot and returns the origin's verdict.
func signedVia(t *testing.T, client *http.Client, method, u, body string) verdict {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = http.NoBody
	}
	req.Header.Set("User-Agent", "InteropBot/1.0")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s via the proxy: %v", method, u, err)
	}
	return readVerdict(t, resp)
}

// TestInteropProxy runs the real binary with signing on in front of the
// verifier origins of e2e/interop (web-bot-auth and
// http-message-signatures, npm) and sends requests through it, over plain
// HTTP and inside an intercepted HTTPS tunnel: both verifiers accept
// every signature the proxy adds, and both reject the same signature
// replayed (its nonce seen), the path changed after signing (a hop
// between proxy and origin rewrites it), another key (looked up by keyid,
// or used whatever the keyid), and the signature once expired: each over
// plain HTTP and inside the intercepted tunnel.
func TestInteropProxy(t *testing.T) {
	dir := interopDir(t)
	keyDir, otherDir := filepath.Join(t.TempDir(), "key"), filepath.Join(t.TempDir(), "other")
	key, err := signing.GenerateKeyDir(keyDir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.GenerateKeyDir(otherDir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	pub, otherPub := filepath.Join(keyDir, signing.PublicKeyFile), filepath.Join(otherDir, signing.PublicKeyFile)
	cert, certKey := originCert(t, t.TempDir())

	type origins struct {
		plain, tls, wrongKeyid, wrongKey, tlsWrongKeyid, tlsWrongKey *nodeOrigin
		tlsHop                                                       string
	}
	all := map[string]origins{}
	var tlsPorts []int
	direct := directTLSClient(t, cert)
	for _, script := range verifierScripts {
		tlsArgs := []string{"--tls-cert", cert, "--tls-key", certKey}
		o := origins{
			plain:         startNodeOrigin(t, dir, script, "--key", pub),
			tls:           startNodeOrigin(t, dir, script, append([]string{"--key", pub}, tlsArgs...)...),
			wrongKeyid:    startNodeOrigin(t, dir, script, "--key", otherPub),
			wrongKey:      startNodeOrigin(t, dir, script, "--key", otherPub, "--ignore-keyid"),
			tlsWrongKeyid: startNodeOrigin(t, dir, script, append([]string{"--key", otherPub}, tlsArgs...)...),
			tlsWrongKey:   startNodeOrigin(t, dir, script, append([]string{"--key", otherPub, "--ignore-keyid"}, tlsArgs...)...),
		}
		o.tlsHop = tlsPathRewriter(t, o.tls, "/page", "/other", cert, certKey, direct)
		all[script] = o
		for _, u := range []string{o.tls.base(), o.tlsWrongKeyid.base(), o.tlsWrongKey.base(), "https://" + o.tlsHop} {
			pu, _ := url.Parse(u)
			var port int
			fmt.Sscan(pu.Port(), &port)
			tlsPorts = append(tlsPorts, port)
		}
	}

	ca := initCA(t)
	p := startProxyEnv(t, interopProxyConfig(keyDir, tlsPorts...), trustEnv(t, cert), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	plainClient := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}, Timeout: time.Minute}
	tlsClient := httpsClient(p.proxyURL("", ""), ca.pool, nil)

	accepted := map[string]verdict{} // method and URL -> what the verifier saw
	sent := 0
	for _, script := range verifierScripts {
		o := all[script]
		t.Run(script, func(t *testing.T) {
			for _, c := range []struct {
				name   string
				origin *nodeOrigin
				proxy  *http.Client
			}{{"http", o.plain, plainClient}, {"https-intercepted", o.tls, tlsClient}} {
				for _, r := range interopRequests("interop") {
					what := fmt.Sprintf("%s %s %s", c.name, r.method, r.path)
					v := signedVia(t, c.proxy, r.method, c.origin.base()+r.path, r.body)
					sent++
					checkAccepted(t, what, v, r, key.ID)
					accepted[r.method+" "+c.origin.base()+r.path] = v
					if !v.OK {
						continue
					}
					if v.Seen["signature-agent"] != `interop="https://bot.example/keys"` {
						t.Errorf("%s: Signature-Agent %q, want interop=\"https://bot.example/keys\"", what, v.Seen["signature-agent"])
					}
					rejects(t, what+" sent again (replayed nonce)",
						sendDirect(t, direct, r.method, c.origin.base()+r.path, v.signedHeaders(), r.body), "nonce replayed")
				}
			}

			hop := pathRewriter(t, o.plain, "/page", "/other")
			for _, l := range []struct {
				name                      string
				proxy, direct             *http.Client
				hop                       string
				origin, wrongKeyid, wrong *nodeOrigin
			}{
				{"http", plainClient, nil, "http://" + hop, o.plain, o.wrongKeyid, o.wrongKey},
				{"https-intercepted", tlsClient, direct, "https://" + o.tlsHop, o.tls, o.tlsWrongKeyid, o.tlsWrongKey},
			} {
				rejects(t, l.name+": a path rewritten after signing", signedVia(t, l.proxy, "GET", l.hop+"/page", ""), "invalid signature")
				rejects(t, l.name+": an origin that knows another key", signedVia(t, l.proxy, "GET", l.wrongKeyid.base()+"/page", ""), "keyid")
				rejects(t, l.name+": an origin that verifies with another key", signedVia(t, l.proxy, "GET", l.wrong.base()+"/page", ""), "invalid signature")
				sent += 3
				v := signedVia(t, l.proxy, "GET", l.origin.base()+"/late", "")
				sent++
				if !v.OK {
					t.Fatalf("%s: GET /late: got %v, want accepted", l.name, v)
				}
				h := v.signedHeaders()
				waitPast(h)
				rejects(t, l.name+": the signature sent again once expired", sendDirect(t, l.direct, "GET", l.origin.base()+"/late", h, ""), "expired")
			}
		})
	}
	checkSignedAudit(t, p, sent, accepted, key.ID)
}

// checkSignedAudit checks that the audit line of every request a verifier
// accepted records the keyid and created time the verifier checked.
func checkSignedAudit(t *testing.T, p *proxyProcess, sent int, accepted map[string]verdict, keyID string) {
	t.Helper()
	found := 0
	for _, l := range p.auditLines(t, sent) {
		u, _ := l["url"].(string)
		m, _ := l["method"].(string)
		v, ok := accepted[m+" "+u]
		if !ok {
			continue
		}
		found++
		if l["signature_keyid"] != keyID || l["signature_created"] != v.Created {
			t.Errorf("audit line of %s %s: signature_keyid %v, signature_created %v; the verifier checked %s, %v",
				m, u, l["signature_keyid"], l["signature_created"], keyID, v.Created)
		}
	}
	if found != len(accepted) {
		t.Errorf("audit: %d lines for the %d accepted requests", found, len(accepted))
	}
}

// tlsPathRewriter starts an https hop (serving certFile) in front of the
// https origin that rewrites the path from to to after the proxy signed
// it, and returns its host:port. It reaches the origin with client.
func tlsPathRewriter(t *testing.T, origin *nodeOrigin, from, to, certFile, keyFile string, client *http.Client) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Transport: client.Transport, Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "https", origin.host
		if r.Out.URL.Path == from {
			r.Out.URL.Path = to
		}
		r.Out.Host = r.In.Host
	}}
	hop := httptest.NewUnstartedServer(rp)
	hop.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	hop.StartTLS()
	t.Cleanup(hop.Close)
	return hop.Listener.Addr().String()
}

// directTLSClient trusts only the interop origins' certificate in certFile.
func directTLSClient(t *testing.T, certFile string) *http.Client {
	t.Helper()
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("%s: no certificate", certFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: time.Minute}
}
