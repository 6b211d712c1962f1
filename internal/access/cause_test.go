package access_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// rawOrigin listens on 127.0.0.1 and hands every connection to serve
// (testkit.Serve).
func rawOrigin(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	return testkit.Serve(t, serve).Addr().String()
}

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestFetcherUnreachableCause classifies real fetch failures: each
// unreachable robots.txt carries the class the client and the audit line
// are told, and every other result carries none.
func TestFetcherUnreachableCause(t *testing.T) {
	slow := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	status500 := newOrigin(t, serve(500, "down"))
	status503 := newOrigin(t, serve(503, "down"))
	notFound := newOrigin(t, serve(404, "no"))
	tooMany := newOrigin(t, serve(429, "slow down"))
	hugeHeader := newOrigin(t, serve(200, stdRobots, "X-Pad", strings.Repeat("a", access.MaxResponseHeaderBytes+1)))
	bigBody := newOrigin(t, serve(200, stdRobots+strings.Repeat("# pad\n", 20000)))
	noLocation := newOrigin(t, serve(302, ""))
	badScheme := newOrigin(t, serve(302, "", "Location", "ftp://example.com/robots.txt"))
	tlsOrigin := newTLSOrigin(t, serve(200, stdRobots))
	plain := newOrigin(t, serve(200, stdRobots))
	hangUp := rawOrigin(t, func(c net.Conn) { io.ReadAll(io.LimitReader(c, 1)) })
	garbage := rawOrigin(t, func(c net.Conn) { io.WriteString(c, "HELLO\r\n\r\n") })

	tests := []struct {
		name      string
		scheme    string
		authority string
		opts      access.FetcherOptions
		result    policy.AccessResult
		cause     string // Cause.Text(Status)
	}{
		{"unresolvable name", "http", "nonexistent.invalid:80", access.FetcherOptions{}, policy.Unreachable, "dns"},
		{"closed port", "http", closedPort(t), access.FetcherOptions{}, policy.Unreachable, "connect"},
		{"connection closed before a response", "http", hangUp, access.FetcherOptions{}, policy.Unreachable, "connect"},
		{"untrusted certificate", "https", tlsOrigin.authority(t, "https"), access.FetcherOptions{}, policy.Unreachable, "tls"},
		{"plain HTTP answers TLS", "https", plain.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "tls"},
		{"timeout", "http", slow.authority(t, "http"), access.FetcherOptions{Timeout: 300 * time.Millisecond}, policy.Unreachable, "timeout"},
		{"status 500", "http", status500.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "status 500"},
		{"status 503", "http", status503.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "status 503"},
		{"status 429 unreachable", "http", tooMany.authority(t, "http"), access.FetcherOptions{TooManyRequestsUnreachable: true}, policy.Unreachable, "status 429"},
		{"3xx without Location", "http", noLocation.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "status 302"},
		{"redirect to ftp", "http", badScheme.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "redirects"},
		{"response header too large", "http", hugeHeader.authority(t, "http"), access.FetcherOptions{}, policy.Unreachable, "too-large"},
		{"malformed response", "http", garbage, access.FetcherOptions{}, policy.Unreachable, "other"},
		{"destination refused", "http", plain.authority(t, "http"), access.FetcherOptions{Guard: &netguard.Guard{}}, policy.Unreachable, "destination-refused"},
		// No cause: the file is not unreachable.
		{"body past the parse limit is cut", "http", bigBody.authority(t, "http"), access.FetcherOptions{}, policy.Successful, ""},
		{"status 404", "http", notFound.authority(t, "http"), access.FetcherOptions{}, policy.Unavailable, ""},
		{"status 429 unavailable", "http", tooMany.authority(t, "http"), access.FetcherOptions{}, policy.Unavailable, ""},
		{"too many redirects", "http", newOrigin(t, redirects(access.MaxRedirects+2, stdRobots)).authority(t, "http"), access.FetcherOptions{}, policy.Unavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), fetchDeadline)
			defer cancel()
			a := accesstest.NewFetcher(tt.opts).Fetch(ctx, tt.scheme, tt.authority)
			if a.Result != tt.result || a.Cause.Text(a.Status) != tt.cause {
				t.Errorf("Fetch(%s://%s): got %s cause %q (status %d, error %v), want %s cause %q",
					tt.scheme, tt.authority, a.Result, a.Cause.Text(a.Status), a.Status, a.Err, tt.result, tt.cause)
			}
		})
	}
}

// TestCauseNames: every cause has a distinct name that parses back to it,
// as a fleet's shared record stores it.
func TestCauseNames(t *testing.T) {
	seen := map[string]bool{}
	for c := policy.CauseNone; c <= policy.CauseOther; c++ {
		name := c.String()
		if seen[name] {
			t.Errorf("Cause(%d): name %q used twice", c, name)
		}
		seen[name] = true
		if got, ok := policy.ParseCause(name); !ok || got != c {
			t.Errorf("ParseCause(%q): got %d, %v, want %d, true", name, got, ok, c)
		}
	}
	if _, ok := policy.ParseCause("status 500"); ok {
		t.Errorf(`ParseCause("status 500"): got ok, want false (the status is the record's own field)`)
	}
}
