package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// switchingOrigin is a TLS origin whose /ws completes a WebSocket
// handshake and whose /h2c answers "101 Switching Protocols" with
// "Upgrade: h2c" whatever it is sent; after either it echoes. It records
// the Upgrade field of each request.
type switchingOrigin struct {
	srv     *httptest.Server
	host    string
	port    int
	pemFile string

	mu       sync.Mutex
	upgrades []string
}

func newSwitchingOrigin(t *testing.T) *switchingOrigin {
	t.Helper()
	o := &switchingOrigin{}
	o.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		o.mu.Lock()
		o.upgrades = append(o.upgrades, r.Header.Get("Upgrade"))
		o.mu.Unlock()
		var head string
		switch r.URL.Path {
		case "/ws":
			sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
				base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
		case "/h2c":
			head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
		default:
			_, _ = io.WriteString(w, "origin:"+r.URL.Path)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString(head)
		_ = brw.Flush()
		_, _ = io.Copy(c, brw)
	}))
	o.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	o.srv.StartTLS()
	t.Cleanup(o.srv.Close)
	o.pemFile = filepath.Join(t.TempDir(), "origin.pem")
	writePEM(t, o.pemFile, o.srv.Certificate())
	o.host = o.srv.Listener.Addr().String()
	o.port = o.srv.Listener.Addr().(*net.TCPAddr).Port
	return o
}

func (o *switchingOrigin) upgradesSeen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.upgrades...)
}

// peakRSS returns the peak resident set size of process pid in octets
// (VmHWM), 0 when it cannot be read.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestTunnelProtocolSwitch: inside an intercepted tunnel, through the
// binary, only a WebSocket handshake switches protocols (and the switched
// tunnel relays whatever follows). A request's "Upgrade: h2c" is not
// forwarded, and an origin that answers 101 "Upgrade: h2c" anyway gets
// its client a 502: the tunnel keeps reading requests with every limit in
// force, so a 32 MiB header after it is cut at the header cap (431, the
// proxy's peak memory barely moves) and a tunnel left idle after it is
// closed after client.idle_timeout.
func TestTunnelProtocolSwitch(t *testing.T) {
	ca := initCA(t)
	o := newSwitchingOrigin(t)
	cfg := fmt.Sprintf("allow_private: true\nconnect:\n  ports: [%d]\nclient:\n  idle_timeout: 1s\n", o.port)
	p := startProxyEnv(t, cfg, trustEnv(t, o.pemFile), "-ca-cert", ca.certFile, "-ca-key", ca.keyFile)
	tunnel := func() (*tls.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", o.host, o.host)
		if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1"})
		return tc, bufio.NewReader(tc)
	}
	ask := func(tc *tls.Conn, br *bufio.Reader, path, fields string) *http.Response {
		t.Helper()
		fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: SwitchBot/1.0\r\n%s\r\n", path, o.host, fields)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
		return resp
	}
	const h2c = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n"

	t.Run("WebSocket", func(t *testing.T) {
		tc, br := tunnel()
		resp := ask(tc, br, "/ws", "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
			t.Fatalf("a WebSocket handshake: %s %v, want 101 with the origin's Sec-WebSocket-Accept", resp.Status, resp.Header)
		}
		frames := bytes.Repeat([]byte("w"), 256<<10) // far over the header cap: not read as a header
		go func() { _, _ = tc.Write(frames) }()
		if got, err := io.ReadAll(io.LimitReader(br, int64(len(frames)))); len(got) != len(frames) {
			t.Errorf("echoed %d of %d octets after the switch (%v), want all", len(got), len(frames), err)
		}
	})
	t.Run("h2c, then a 32 MiB header", func(t *testing.T) {
		tc, br := tunnel()
		if resp := ask(tc, br, "/h2c", h2c); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("Upgrade: h2c answered 101 by the origin: got %s, want 502", resp.Status)
		}
		if resp := ask(tc, br, "/after", ""); resp.StatusCode != 200 {
			t.Fatalf("the next request on the tunnel: got %s, want 200", resp.Status)
		}
		before := peakRSS(p.cmd.Process.Pid)
		go func() {
			fmt.Fprintf(tc, "GET /big HTTP/1.1\r\nHost: %s\r\nX-Big: ", o.host)
			chunk := bytes.Repeat([]byte("b"), 1<<20)
			for range 32 {
				if _, err := tc.Write(chunk); err != nil {
					return // cut at the cap
				}
			}
			_, _ = io.WriteString(tc, "\r\n\r\n")
		}()
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("a 32 MiB header after the refused switch: %v %v, want 431", resp, err)
		}
		time.Sleep(200 * time.Millisecond)
		if after := peakRSS(p.cmd.Process.Pid); before > 0 && after-before > 16<<20 {
			t.Errorf("the proxy's peak memory grew by %d MiB over a 32 MiB header, want it cut at the cap", (after-before)>>20)
		}
	})
	t.Run("h2c, then idle", func(t *testing.T) {
		tc, br := tunnel()
		if resp := ask(tc, br, "/h2c", h2c); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("Upgrade: h2c answered 101 by the origin: got %s, want 502", resp.Status)
		}
		start := time.Now()
		_, err := br.ReadByte()
		if waited := time.Since(start); err == nil || waited > 5*time.Second {
			t.Errorf("a tunnel idle after a refused switch: read %v after %s, want it closed after client.idle_timeout (1s)", err, waited)
		}
	})
	for _, u := range o.upgradesSeen() {
		if u != "" && u != "websocket" {
			t.Errorf("the origin was sent Upgrade %q; want only WebSocket handshakes forwarded", u)
		}
	}
	n502 := 0
	for _, l := range p.auditLines(t, 0) {
		if l["url"] == "https://"+o.host+"/h2c" {
			if l["status"] != 502.0 || !strings.Contains(fmt.Sprint(l["error"]), "101") {
				t.Errorf("audit line %v: want status 502 and the error", l)
			}
			n502++
		}
	}
	if n502 != 2 {
		t.Errorf("%d audit lines for /h2c, want 2", n502)
	}
}
