package proxy_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
)

// rawConnect sends one CONNECT with the target exactly as given and returns
// the reply and the connection (a tunnel when the reply is 200).
func rawConnect(t *testing.T, h *harness, target string) (*http.Response, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", h.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", target, target)
	br := bufioReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("CONNECT %s: reading the reply: %v", target, err)
	}
	return resp, conn
}

// TestConnectPortIsExplicit: a CONNECT target without a port is refused
// with 400 (it was decided as 443 and dialled as 80), and the port that is
// decided is the port that is dialled, in every form.
func TestConnectPortIsExplicit(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	tlsCfg := o.Client().Transport.(*http.Transport).TLSClientConfig
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(o.URL, "https://"))
	h := newHarness(t, harnessOptions{tls: tlsCfg, policy: func(po *policy.Options) {
		po.ConnectPorts = []int{443, mustAtoi(t, port)}
	}})
	// "::1:443" never reaches the proxy: Go's HTTP server refuses it (400).
	refused := []string{"127.0.0.1", "[::1]", "localhost", "example.com.", "127.0.0.1:", "[::1]:", ":443"}
	for _, target := range refused {
		t.Run(target, func(t *testing.T) {
			resp, _ := rawConnect(t, h, target)
			if resp.StatusCode != 400 || resp.Header.Get("X-Robotsproxy-Reason") != "bad-request" {
				t.Errorf("CONNECT %s: got %d %q, want 400 bad-request", target, resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
			}
		})
	}
	if n := o.RobotsHits(); n != 0 {
		t.Errorf("robots.txt fetched %d times for refused targets, want 0", n)
	}
	// "0PORT" is decided as PORT and dialled as PORT: the tunnel reaches
	// the origin, and a plain request inside it is answered by it.
	for _, target := range []string{"127.0.0.1:" + port, "127.0.0.1:0" + port} {
		t.Run(target, func(t *testing.T) {
			resp, conn := rawConnect(t, h, target)
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT %s: got %d, want 200", target, resp.StatusCode)
			}
			cfg := tlsCfg.Clone()
			cfg.ServerName = "127.0.0.1"
			tc := tls.Client(conn, cfg)
			fmt.Fprintf(tc, "GET /page HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
			inner, err := http.ReadResponse(bufioReader(tc), nil)
			if err != nil || inner.Header.Get("X-Origin") != "yes" {
				t.Fatalf("request inside the tunnel: %v, %v; want the origin's answer", inner, err)
			}
		})
	}
	// A refused CONNECT's line is written after its answer, so lines are
	// matched by target, not by position.
	lines := h.audit.WaitLines(t, len(refused)+2)
	for _, target := range refused {
		found := false
		for _, l := range lines {
			if l["url"] == target {
				found = true
				if l["reason"] != "bad-request" || l["status"] != float64(400) {
					t.Errorf("audit line %v: want reason bad-request, status 400", l)
				}
			}
		}
		if !found {
			t.Errorf("no audit line for CONNECT %s in %v", target, lines)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConnectRefusalLineBeforeAnswer: a refused CONNECT's audit line is
// written before the client can read the answer (goproxy writes it on the
// hijacked connection, before the handler returns).
func TestConnectRefusalLineBeforeAnswer(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for i := range 30 {
		resp, _ := rawConnect(t, h, "127.0.0.1") // no port: 400 bad-request
		if resp.StatusCode != 400 {
			t.Fatalf("CONNECT: got %d, want 400", resp.StatusCode)
		}
		lines := h.audit.Lines(t)
		if len(lines) != i+1 {
			t.Fatalf("after %d answers the audit log has %d lines", i+1, len(lines))
		}
		if l := lines[i]; l["status"] != 400.0 || l["bytes"] == 0.0 {
			t.Errorf("audit line %v: want status 400 and the answer's body size", l)
		}
	}
}
