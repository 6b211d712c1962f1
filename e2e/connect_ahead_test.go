package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// aheadConn is a client's connection to the proxy that sends its CONNECT
// in the same write as the first octets of the tunnel (a TLS ClientHello,
// or a request), as a client that does not wait for the 200 does. Reads
// return the tunnel's octets, after the proxy's answer to the CONNECT.
type aheadConn struct {
	net.Conn
	connect string
	sent    bool
	br      *bufio.Reader
}

func (c *aheadConn) Write(b []byte) (int, error) {
	if c.sent {
		return c.Conn.Write(b)
	}
	c.sent = true
	if _, err := c.Conn.Write(append([]byte(c.connect), b...)); err != nil { // one write
		return 0, err
	}
	return len(b), nil
}

func (c *aheadConn) Read(b []byte) (int, error) {
	if c.br == nil {
		c.br = bufio.NewReader(c.Conn)
		resp, err := http.ReadResponse(c.br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return 0, fmt.Errorf("the proxy's answer to CONNECT: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("the proxy answered CONNECT with %s", resp.Status)
		}
	}
	return c.br.Read(b)
}

// connectAhead opens a tunnel to host through the proxy at proxyAddr with
// a CONNECT sent in one write with what follows it: the TLS handshake,
// trusting roots (nil: cleartext), then GET path. It returns the answer.
func connectAhead(t *testing.T, proxyAddr, host, path string, roots *x509.CertPool) (*http.Response, string, error) {
	t.Helper()
	raw, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(10 * time.Second))
	var c net.Conn = &aheadConn{Conn: raw, connect: fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: AheadBot/1.0\r\n\r\n", host, host)}
	if roots != nil {
		tc := tls.Client(c, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil {
			return nil, "", fmt.Errorf("TLS handshake: %w", err)
		}
		c = tc
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: AheadBot/1.0\r\n\r\n", path, host); err != nil {
		return nil, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// TestConnectWithTunnelOctets: a client that writes its CONNECT and the
// start of the tunnel (a TLS ClientHello, or a cleartext request) in one
// write, before the 200, gets its request answered: the octets the proxy
// read with the CONNECT start the tunnel, intercepted (TLS or cleartext)
// or relayed host-level, and nothing stalls until a timeout.
func TestConnectWithTunnelOctets(t *testing.T) {
	ca := initCA(t)
	o := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	plain := newTestOrigin(t, "User-agent: *\nAllow: /\n", false)
	intercepting := startProxyEnv(t, fmt.Sprintf("allow_private: true\nconnect:\n  ports: [%d, %d]\n", o.port, plain.port),
		trustEnv(t, o.pemFile), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	hostLevel := startProxyEnv(t, mitmConfig(o, "mitm:\n  mode: host-level\n"), trustEnv(t, o.pemFile))
	originRoots := x509.NewCertPool()
	originRoots.AddCert(o.srv.Certificate())

	for _, c := range []struct {
		name  string
		p     *proxyProcess
		host  string
		roots *x509.CertPool
		url   string // of the request's audit line, "" for none (host-level)
	}{
		{"intercepted TLS", intercepting, o.host, ca.pool, "https://" + o.host + "/ahead-tls"},
		{"intercepted cleartext", intercepting, plain.host, nil, "http://" + plain.host + "/ahead-clear"},
		{"host-level TLS", hostLevel, o.host, originRoots, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := "/ahead-" + map[bool]string{true: "tls", false: "clear"}[c.roots != nil]
			if c.p == hostLevel {
				path = "/ahead-host-level"
			}
			start := time.Now()
			resp, body, err := connectAhead(t, c.p.proxyAddr, c.host, path, c.roots)
			if err != nil || resp.StatusCode != 200 || body != "origin:"+path {
				t.Fatalf("CONNECT and the tunnel's first octets in one write: %v %q %v after %s, want 200 from the origin",
					resp, body, err, time.Since(start).Round(time.Millisecond))
			}
			if c.url == "" {
				return
			}
			if l := waitLine(t, c.p, c.url); l["decision"] != "allow" || l["status"] != 200.0 || l["intercepted"] != true {
				t.Errorf("audit line %v: want allow 200 intercepted", l)
			}
		})
	}
}

// waitLine waits up to 10 s for the audit line of url and returns it.
func waitLine(t *testing.T, p *proxyProcess, url string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range p.auditLines(t, 0) {
			if l["url"] == url {
				return l
			}
		}
	}
	t.Fatalf("no audit line for %s", url)
	return nil
}
