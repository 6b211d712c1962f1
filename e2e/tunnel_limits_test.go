package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalledBody sends a few octets, then nothing for 10 s.
type stalledBody struct{ sent bool }

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "the start of a body"), nil
	}
	time.Sleep(10 * time.Second)
	return 0, errors.New("the test's body gave up stalling")
}

// TestMITMClientLimits: with interception on, the client limits hold
// inside tunnels as outside, through the built binary: a header over
// client.max_header_bytes, even far over it, gets 431 and never reaches
// the origin, a body that stalls gets 408 with cut_off "body-idle",
// headers that stop close the tunnel after client.read_header_timeout,
// each audited and counted once; a normal request still works.
func TestMITMClientLimits(t *testing.T) {
	ca := initCA(t)
	o := newTestOrigin(t, "User-agent: *\nAllow: /\n", true)
	cfg := mitmConfig(o, "client:\n  max_header_bytes: 32768\n  read_header_timeout: 1s\n  body_idle_timeout: 1s\n  body_min_rate: 0\n")
	p := startProxyEnv(t, cfg, trustEnv(t, o.pemFile), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	base := "https://" + o.host

	send := func(method, path string, body io.Reader, length int64, header int) (int, error) {
		client := httpsClient(p.proxyURL("", ""), ca.pool, nil)
		defer client.Transport.(*http.Transport).CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, base+path, body)
		req.ContentLength = length
		req.Header.Set("User-Agent", "GoClientBot/1.0")
		if header > 0 {
			req.Header.Set("X-Big", strings.Repeat("h", header))
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	lines := 0
	lineOf := func(t *testing.T, url string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			all := p.auditLines(t, lines)
			for _, l := range all[lines:] {
				if l["url"] == url {
					lines = len(all)
					return l
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no audit line for %s", url)
		return nil
	}

	t.Run("normal", func(t *testing.T) {
		if status, err := send("GET", "/page", nil, 0, 1000); status != 200 {
			t.Fatalf("GET /page with a 1000-octet header: got %d (%v), want 200", status, err)
		}
		if l := lineOf(t, base+"/page"); l["decision"] != "allow" || l["status"] != 200.0 {
			t.Errorf("audit line %v: want allow 200", l)
		}
	})
	t.Run("header over the limit", func(t *testing.T) {
		if status, err := send("GET", "/big", nil, 0, 64<<10); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("a 64 KiB header: got %d (%v), want 431", status, err)
		}
		l := lineOf(t, base+"/big")
		if l["reason"] != "header-too-large" || l["status"] != 431.0 || l["intercepted"] != true {
			t.Errorf("audit line %v: want reason header-too-large, status 431, intercepted", l)
		}
	})
	t.Run("1 MiB header", func(t *testing.T) {
		for range 5 {
			status, err := send("GET", "/huge", nil, 0, 1<<20)
			if status != http.StatusRequestHeaderFieldsTooLarge {
				t.Fatalf("a 1 MiB header: got %d (%v), want 431", status, err)
			}
			l := lineOf(t, base+"/huge")
			if l["reason"] != "header-too-large" || l["status"] != 431.0 || l["intercepted"] != true {
				t.Errorf("audit line %v: want reason header-too-large, status 431, intercepted", l)
			}
		}
	})
	t.Run("stalled body", func(t *testing.T) {
		start := time.Now()
		status, err := send("POST", "/upload", &stalledBody{}, 1000, 0)
		if status != http.StatusRequestTimeout {
			t.Fatalf("a body that stalls: got %d (%v) after %s, want 408", status, err, time.Since(start))
		}
		if l := lineOf(t, base+"/upload"); l["cut_off"] != "body-idle" || l["status"] != 408.0 {
			t.Errorf("audit line %v: want status 408, cut_off body-idle", l)
		}
	})
	t.Run("headers that stop", func(t *testing.T) {
		c, err := net.Dial("tcp", p.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: GoClientBot/1.0\r\n\r\n", o.host, o.host)
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1"})
		fmt.Fprintf(tc, "GET /never HTTP/1.1\r\nHost: %s\r\n", o.host)
		start := time.Now()
		if _, err := tc.Read(make([]byte, 1)); err == nil || time.Since(start) > 5*time.Second {
			t.Fatalf("headers that stop inside a tunnel: read %v after %s, want the tunnel closed after 1s", err, time.Since(start))
		}
		if l := lineOf(t, base+"/never"); l["reason"] != "client-timeout" || l["status"] != 0.0 || l["intercepted"] != true {
			t.Errorf("audit line %v: want reason client-timeout, status 0, intercepted", l)
		}
	})
	m := scrapeMetrics(t, p.adminAddr)
	for cause, want := range map[string]float64{"header_too_large": 6, "body_idle": 1, "header_timeout": 1} {
		if got := m[`robotsproxy_client_refusals_total{cause="`+cause+`"}`]; got != want {
			t.Errorf("robotsproxy_client_refusals_total{cause=%q} = %v, want %v", cause, got, want)
		}
	}
	if n := o.hitCount("/big") + o.hitCount("/huge") + o.hitCount("/never"); n != 0 {
		t.Errorf("the origin got %d requests with a header over the limit, want 0", n)
	}
	if status, err := send("GET", "/after", nil, 0, 0); status != 200 {
		t.Errorf("GET /after: got %d (%v), want 200", status, err)
	}
}
