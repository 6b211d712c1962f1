package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUnreachableCause runs the binary against robots.txt files that
// cannot be fetched for different reasons: each 403 names the cause class
// in X-Robotsproxy-Unreachable and in its text, and its audit line has
// the same class in unreachable_cause, besides the error itself.
func TestUnreachableCause(t *testing.T) {
	// An HTTPS origin whose certificate the proxy does not trust.
	untrusted := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	p := startProxy(t, mitmConfig(untrusted, "robots:\n  timeout: 5s\nmitm:\n  mode: host-level\n")) // CONNECTs get a host decision
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}, Timeout: time.Minute}
	defer client.Transport.(*http.Transport).CloseIdleConnections()

	tests := []struct {
		name   string
		method string // GET through the proxy, or CONNECT (a host-level tunnel)
		target string
		cause  string
		hint   string // in the body, after "is unreachable (<cause>: "
		err    string // in the audit line's error
	}{
		{"dns", "GET", "http://nonexistent.invalid/page", "dns", "the host name does not resolve", "nonexistent.invalid"},
		{"tls", "CONNECT", untrusted.host, "tls", "the TLS handshake with the origin failed", "certificate"},
		{"connect", "GET", "http://" + closed + "/page", "connect", "the connection to the origin failed", "refused"},
		{"status 500", "GET", down.URL + "/page", "status 500", "the origin answered with a status", ""},
	}
	var wants []map[string]any
	for _, tt := range tests {
		var resp *http.Response
		var body []byte
		if tt.method == "CONNECT" {
			resp, body = rawConnect(t, p.proxyAddr, tt.target, http.Header{"User-Agent": {"GoClientBot/1.0"}})
		} else {
			resp, body, err = getVia(client, tt.target, "GoClientBot/1.0")
			if err != nil {
				t.Fatalf("%s %s: %v", tt.method, tt.target, err)
			}
		}
		wantBody := fmt.Sprintf("is unreachable (%s: %s", tt.cause, tt.hint)
		if resp.StatusCode != 403 || resp.Header.Get("X-Robotsproxy-Reason") != "unreachable" ||
			resp.Header.Get("X-Robotsproxy-Unreachable") != tt.cause || !strings.Contains(string(body), wantBody) {
			t.Errorf("%s %s (%s): got %d reason %q X-Robotsproxy-Unreachable %q body %q, want 403 unreachable, %q, and a body with %q",
				tt.method, tt.target, tt.name, resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"),
				resp.Header.Get("X-Robotsproxy-Unreachable"), body, tt.cause, wantBody)
		}
		// Every header a denial had before is still there.
		for _, h := range []string{"X-Robotsproxy-Decision", "X-Robotsproxy-Product-Token", "X-Robotsproxy-Robots-Url", "X-Robotsproxy-Access-Result"} {
			if resp.Header.Get(h) == "" {
				t.Errorf("%s %s: no %s header", tt.method, tt.target, h)
			}
		}
		w := map[string]any{"method": tt.method, "decision": "deny", "reason": "unreachable", "status": 403,
			"access_result": "unreachable", "unreachable_cause": tt.cause}
		if tt.err != "" {
			w["error"] = fieldContains(tt.err)
		}
		wants = append(wants, w)
	}
	matchAudit(t, "unreachable causes", p.auditSince(t, 0, len(tests)), wants)
	p.stop(t)
}
