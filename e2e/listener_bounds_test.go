package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServiceListenerBounds runs serve with client.idle_timeout 1s,
// client.read_header_timeout 2s and client.max_header_bytes 4096: the
// admin and key directory listeners close keep-alive connections left
// idle, and connections that never finish their headers, within those
// timeouts; refuse an oversized header section with 431; and count their
// connections in robotsproxy_listener_connections.
func TestServiceListenerBounds(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runBinary(t, "", "keys", "init", filepath.Join(dir, "k1")); code != 0 {
		t.Fatalf("keys init: %s", stderr)
	}
	p := startProxy(t, fmt.Sprintf("client:\n  idle_timeout: 1s\n  read_header_timeout: 2s\n  max_header_bytes: 4096\n"+
		"signing:\n  enabled: true\n  directory_listen: 127.0.0.1:0\n"+
		"  identities:\n    - default: true\n      keys: [%s]\n      signature_agent: https://crawler.example\n", filepath.Join(dir, "k1")))
	listeners := map[string]struct{ addr, request string }{
		"admin":     {p.adminAddr, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n"},
		"directory": {directoryAddr(t, p), "GET /.well-known/http-message-signatures-directory HTTP/1.1\r\nHost: crawler.example\r\n\r\n"},
	}
	const n = 20
	for name, l := range listeners {
		var conns []net.Conn
		for range n {
			c, err := net.Dial("tcp", l.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			conns = append(conns, c)
		}
		// Keep-alive: one request each, answered, then silence.
		readers := make([]*bufio.Reader, n)
		for i, c := range conns {
			if _, err := io.WriteString(c, l.request); err != nil {
				t.Fatal(err)
			}
			readers[i] = bufio.NewReader(c)
			res, err := http.ReadResponse(readers[i], nil)
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("%s: first request: %v %v", name, res, err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		if open := scrapeMetrics(t, p.adminAddr)[`robotsproxy_listener_connections{listener="`+name+`"}`]; open < n {
			t.Errorf("%s: robotsproxy_listener_connections %v with %d open", name, open, n)
		}
		// Closed by the server within idle_timeout (1s), with room for a
		// busy machine; without an idle timeout they stay open.
		for i, c := range conns {
			if err := closedWithin(c, readers[i], 6*time.Second); err != nil {
				t.Errorf("%s: idle keep-alive connection %d: %v", name, i, err)
			}
		}
		// Headers never finished: closed within read_header_timeout (2s).
		c, err := net.Dial("tcp", l.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, strings.TrimSuffix(l.request, "\r\n"))
		if err := closedWithin(c, bufio.NewReader(c), 7*time.Second); err != nil {
			t.Errorf("%s: a connection that never ends its headers: %v", name, err)
		}
		c.Close()
		// A header section over max_header_bytes (with Go's 4096 of slack).
		big := strings.Replace(l.request, "\r\n\r\n", "\r\nX-Pad: "+strings.Repeat("a", 16<<10)+"\r\n\r\n", 1)
		if c, err = net.Dial("tcp", l.addr); err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, big)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%s: a 16 KiB header: %v %v, want 431", name, res, err)
		}
		c.Close()
	}
}

// closedWithin waits up to d for the server to close c (EOF, or a
// connection reset), reading through r; an answer or the deadline is an
// error.
func closedWithin(c net.Conn, r *bufio.Reader, d time.Duration) error {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := r.ReadByte()
	switch {
	case err == nil:
		return fmt.Errorf("the server sent %q, want the connection closed", b)
	case err == io.EOF, strings.Contains(err.Error(), "connection reset"):
		return nil
	case isTimeout(err):
		return fmt.Errorf("still open after %v", d)
	}
	return err
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
