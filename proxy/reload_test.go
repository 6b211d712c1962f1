package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// TestSetPolicy: SetPolicy replaces the policy for the next request, plain
// HTTP and CONNECT alike, on a connection opened before the swap; a nil
// policy is ignored.
func TestSetPolicy(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	defer origin.Close()
	host, _, _ := net.SplitHostPort(origin.Listener.Addr().String())
	cache := access.NewCache(access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true},
		UserAgent: "robotsproxy-test", Timeout: 2 * time.Second}).Fetch, access.CacheOptions{})
	newPolicy := func(deny []string, refuseConnect bool) *policy.Policy {
		return policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil),
			Cache: cache, DenyHosts: deny, RefuseConnect: refuseConnect})
	}
	open, closed := newPolicy(nil, false), newPolicy([]string{host}, true)
	p := proxy.New(proxy.Options{Policy: open, Transport: proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true}), Audit: io.Discard})
	srv := httptest.NewServer(p)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(req string) string {
		t.Helper()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return outcome(resp)
	}
	u, _ := url.Parse(origin.URL)
	get := fmt.Sprintf("GET %s/page HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", origin.URL, u.Host)
	// Port 443: the open policy decides it on https://HOST/robots.txt,
	// which nothing serves (unreachable); the other refuses every CONNECT.
	connect := fmt.Sprintf("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host)
	steps := []struct {
		name        string
		set         *policy.Policy
		get, tunnel string
	}{
		{"initial policy", nil, "200 ", "403 unreachable"},
		{"host denied, CONNECT refused", closed, "403 host-denied", "403 connect-refused"},
		{"nil is ignored", nil, "403 host-denied", "403 connect-refused"},
		{"back to the open policy", open, "200 ", "403 unreachable"},
	}
	for _, s := range steps {
		p.SetPolicy(s.set)
		if got := send(get); got != s.get {
			t.Errorf("%s: GET: got %q, want %q", s.name, got, s.get)
		}
		if got := reloadConnect(t, srv.Listener.Addr().String(), connect); got != s.tunnel {
			t.Errorf("%s: CONNECT: got %q, want %q", s.name, got, s.tunnel)
		}
	}
}

// outcome is a response's status and robotsproxy reason, "403 host-denied".
func outcome(resp *http.Response) string {
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
}

// reloadConnect sends a CONNECT on a new connection and returns its
// outcome.
func reloadConnect(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	resp.Body.Close()
	return outcome(resp)
}
