package proxy_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHopByHopHeaders sends raw requests, so that no client tidies the
// headers first, and checks that hop-by-hop fields (RFC 9110 7.6.1) stop
// at the proxy in both directions, and that a request with no User-Agent
// is forwarded with none.
func TestHopByHopHeaders(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Connection", "X-Origin-Hop")
		w.Header().Set("X-Origin-Hop", "secret")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-End-To-End", "kept")
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(origin.Close)
	h := newHarness(t, harnessOptions{})
	host := strings.TrimPrefix(origin.URL, "http://")

	tests := []struct {
		name    string
		headers string
		absent  []string          // at the origin
		present map[string]string // at the origin
	}{
		{"named in Connection", "User-Agent: ExampleBot/1.0\r\nConnection: keep-alive, X-Client-Hop\r\nX-Client-Hop: 1\r\nX-Kept: 2\r\n",
			[]string{"X-Client-Hop", "Connection"}, map[string]string{"X-Kept": "2", "User-Agent": "ExampleBot/1.0"}},
		{"keep-alive, te, upgrade, proxy-connection", "User-Agent: ExampleBot/1.0\r\nKeep-Alive: timeout=5\r\nTE: gzip\r\nUpgrade: h2c\r\nProxy-Connection: keep-alive\r\n",
			[]string{"Keep-Alive", "Te", "Upgrade", "Proxy-Connection"}, nil},
		{"TE: trailers is end to end", "User-Agent: ExampleBot/1.0\r\nTE: trailers, gzip\r\n",
			nil, map[string]string{"Te": "trailers"}},
		{"no User-Agent", "",
			[]string{"User-Agent"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", h.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(conn, "GET http://%s/page HTTP/1.1\r\nHost: %s\r\n%s\r\n", host, host, tt.headers)
			resp, err := http.ReadResponse(bufioReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("got %d, want 200", resp.StatusCode)
			}
			for _, k := range []string{"X-Origin-Hop", "Keep-Alive"} {
				if v := resp.Header.Get(k); v != "" {
					t.Errorf("client got %s: %q from the origin; want it removed", k, v)
				}
			}
			if resp.Header.Get("X-End-To-End") != "kept" {
				t.Errorf("client lost the end-to-end header X-End-To-End")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range tt.absent {
				if v, ok := got[k]; ok {
					t.Errorf("origin got %s: %q; want it removed", k, v)
				}
			}
			for k, v := range tt.present {
				if got.Get(k) != v {
					t.Errorf("origin got %s: %q, want %q", k, got.Get(k), v)
				}
			}
		})
	}
}
