package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// TestMalformedInsideTunnel: a malformed request gets the same answer and
// the same audit line inside an intercepted tunnel as outside one, through
// the binary: the same octets (but the request target's form) are
// answered 400 or 501 by the HTTP server, with reason malformed-request
// and the same fields, the line inside marked intercepted; neither
// reaches the origin.
func TestMalformedInsideTunnel(t *testing.T) {
	ca := initCA(t)
	o := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	p := startProxyEnv(t, mitmConfig(o, ""), trustEnv(t, o.pemFile), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	cases := []struct {
		name, path, rest string
		status           int
	}{
		{"two Content-Length fields", "/two-cl", "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"two Transfer-Encoding fields", "/two-te", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
		{"Transfer-Encoding: gzip", "/te-gzip", "Transfer-Encoding: gzip\r\n\r\n", 501},
		{"a control octet in a header", "/ctl", "X-Bad: a\x01b\r\n\r\n", 400},
	}
	// send writes one request, its target in the given form, on c and
	// returns the status of the answer (0: none).
	send := func(c io.ReadWriter, target, host, rest string) int {
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: MalformedBot/1.0\r\n%s", target, host, rest)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := net.Dial("tcp", p.proxyAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			_ = out.SetDeadline(time.Now().Add(10 * time.Second))
			plainURL := "http://" + o.host + c.path
			if got := send(out, plainURL, o.host, c.rest); got != c.status {
				t.Fatalf("outside a tunnel: got %d, want %d", got, c.status)
			}

			tunnel, err := net.Dial("tcp", p.proxyAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer tunnel.Close()
			_ = tunnel.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(tunnel, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", o.host, o.host)
			br := bufio.NewReader(tunnel)
			if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
				t.Fatalf("CONNECT: %v %v", resp, err)
			}
			tc := tls.Client(tunnel, &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1"})
			if got := send(tc, c.path, o.host, c.rest); got != c.status {
				t.Fatalf("inside an intercepted tunnel: got %d, want %d (as outside)", got, c.status)
			}

			outside, inside := waitLine(t, p, plainURL), waitLine(t, p, "https://"+o.host+c.path)
			if outside[auditlog.FieldReason] != auditlog.ReasonMalformed || outside[auditlog.FieldStatus] != float64(c.status) {
				t.Errorf("the line outside %v: want reason %s, status %d", outside, auditlog.ReasonMalformed, c.status)
			}
			if inside[auditlog.FieldIntercepted] != true {
				t.Errorf("the line inside %v: want intercepted", inside)
			}
			keys := func(l map[string]any) []string {
				var k []string
				for f := range l {
					if f != auditlog.FieldIntercepted {
						k = append(k, f)
					}
				}
				slices.Sort(k)
				return k
			}
			if ko, ki := keys(outside), keys(inside); !reflect.DeepEqual(ko, ki) {
				t.Errorf("fields outside %v, inside %v: want the same", ko, ki)
			}
			for _, f := range []string{auditlog.FieldMethod, auditlog.FieldUserAgent, auditlog.FieldDecision, auditlog.FieldReason,
				auditlog.FieldStatus, auditlog.FieldBytes, auditlog.FieldProtocol, auditlog.FieldError} {
				if !reflect.DeepEqual(outside[f], inside[f]) {
					t.Errorf("%s: %v outside, %v inside", f, outside[f], inside[f])
				}
			}
			if n := o.hitCount(c.path); n != 0 {
				t.Errorf("the origin got %s %d times", c.path, n)
			}
		})
	}
	if m := scrapeMetrics(t, p.adminAddr); m[`robotsproxy_client_refusals_total{cause="malformed"}`] != float64(2*len(cases)) {
		t.Errorf("robotsproxy_client_refusals_total{cause=\"malformed\"} = %v, want %d", m[`robotsproxy_client_refusals_total{cause="malformed"}`], 2*len(cases))
	}
}
