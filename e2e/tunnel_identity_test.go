package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tunnelGet opens a CONNECT tunnel to o through the proxy, with the
// User-Agent ua on the CONNECT ("" sends none, as Python's requests does),
// and sends GET path over TLS inside it, trusting the origin's
// certificate. It returns the CONNECT status, and the inner response's
// body when the tunnel opened.
func tunnelGet(t *testing.T, proxyAddr string, o *testOrigin, ua, path string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", proxyAddr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n", o.host, o.host)
	if ua != "" {
		req += "User-Agent: " + ua + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", o.host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, ""
	}
	pool := x509.NewCertPool()
	pool.AddCert(o.srv.Certificate())
	tc := tls.Client(conn, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if _, err := fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, o.host); err != nil {
		t.Fatalf("GET %s inside the tunnel: %v", path, err)
	}
	inner, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatalf("GET %s inside the tunnel: %v", path, err)
	}
	defer inner.Body.Close()
	body, _ := io.ReadAll(inner.Body)
	return resp.StatusCode, string(body)
}

// TestConnectRequireIdentity: with connect.require_identity a host-level
// CONNECT that names no crawler and has no pin is refused (403
// unidentified-tunnel, a body that says what to do) before anything
// reaches the origin; a User-Agent or a pin opens it as before; without
// the key the same CONNECT opens a tunnel decided under "*".
func TestConnectRequireIdentity(t *testing.T) {
	o := newTestOrigin(t, "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n", true)
	env := trustEnv(t, o.pemFile)

	t.Run("off", func(t *testing.T) {
		p := startProxyEnv(t, mitmConfig(o, "mitm:\n  mode: host-level\n"), env)
		if status, body := tunnelGet(t, p.proxyAddr, o, "", "/page"); status != 200 || body != "origin:/page" {
			t.Errorf("CONNECT without a User-Agent, connect.require_identity off: got %d %q, want 200 and the origin's page", status, body)
		}
		matchAudit(t, "off", p.auditSince(t, 0, 1), []map[string]any{{"method": "CONNECT", "decision": "allow",
			"reason": "no-matching-rule", "product_token": "*", "token_source": "default", "tunnel": "host-level", "status": 200}})
		p.stop(t)
	})

	t.Run("on", func(t *testing.T) {
		p := startProxyEnv(t, mitmConfig(o, "  require_identity: true\nmitm:\n  mode: host-level\n"), env)
		before, fetches := o.conns.Load(), o.fetches()
		resp, body := rawConnect(t, p.proxyAddr, o.host, nil)
		if resp.StatusCode != 403 || resp.Header.Get("X-Robotsproxy-Reason") != "unidentified-tunnel" || resp.Header.Get("X-Robotsproxy-Decision") != "deny" {
			t.Errorf("CONNECT without a User-Agent: got %d reason %q, want 403 unidentified-tunnel", resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
		}
		for _, want := range []string{"unidentified-tunnel", "User-Agent", "CONNECT", "identity.users", "identity.client_ranges", "mitm"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("CONNECT without a User-Agent: body %q does not mention %q", body, want)
			}
		}
		// Browser tokens only name no crawler either.
		if resp, body := rawConnect(t, p.proxyAddr, o.host, http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64)"}}); resp.StatusCode != 403 ||
			resp.Header.Get("X-Robotsproxy-Reason") != "unidentified-tunnel" {
			t.Errorf("CONNECT with a browser User-Agent: got %d reason %q (%q), want 403 unidentified-tunnel", resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"), body)
		}
		if n, f := o.conns.Load()-before, o.fetches()-fetches; n != 0 || f != 0 {
			t.Errorf("refused tunnels: the origin got %d connections and %d robots.txt fetches, want none", n, f)
		}
		// With a product token the CONNECT is decided as before: for "/".
		if status, body := tunnelGet(t, p.proxyAddr, o, "GoClientBot/1.0", "/page"); status != 200 || body != "origin:/page" {
			t.Errorf("CONNECT as GoClientBot: got %d %q, want 200 and the origin's page", status, body)
		}
		if status, _ := tunnelGet(t, p.proxyAddr, o, "GPTBot/1.0", "/page"); status != 403 {
			t.Errorf("CONNECT as GPTBot (Disallow: /): got %d, want 403", status)
		}
		refused := map[string]any{"method": "CONNECT", "url": o.host, "decision": "deny", "reason": "unidentified-tunnel",
			"product_token": "*", "token_source": "default", "status": 403, "enforced": true,
			"robots_url": "https://" + o.host + "/robots.txt", "error": fieldContains("require_identity"), "tunnel": fieldAbsent}
		matchAudit(t, "on", p.auditSince(t, 0, 4), []map[string]any{refused, refused,
			{"method": "CONNECT", "decision": "allow", "reason": "no-matching-rule", "product_token": "GoClientBot", "tunnel": "host-level", "status": 200},
			{"method": "CONNECT", "decision": "deny", "reason": "rule", "product_token": "GPTBot", "status": 403}})
		p.stop(t)
	})

	t.Run("on, pinned client", func(t *testing.T) {
		p := startProxyEnv(t, mitmConfig(o, "  require_identity: true\nmitm:\n  mode: host-level\nidentity:\n  client_ranges:\n    - cidr: 127.0.0.0/8\n      token: PinnedBot\n"), env)
		if status, body := tunnelGet(t, p.proxyAddr, o, "", "/page"); status != 200 || body != "origin:/page" {
			t.Errorf("CONNECT without a User-Agent from a pinned range: got %d %q, want 200 and the origin's page", status, body)
		}
		matchAudit(t, "pinned", p.auditSince(t, 0, 1), []map[string]any{{"method": "CONNECT", "decision": "allow",
			"product_token": "PinnedBot", "tunnel": "host-level", "status": 200}})
		p.stop(t)
	})
}
