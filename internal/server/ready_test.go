package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestReadinessStatus: the phases, and checks that make the server not
// ready or degraded.
func TestReadinessStatus(t *testing.T) {
	type check struct {
		name   string
		ready  bool
		reason string
	}
	cases := []struct {
		name   string
		phase  readyPhase
		checks []check
		code   int
		body   string
	}{
		{"starting", phaseStarting, nil, 503, "not ready: starting"},
		{"serving", phaseServing, nil, 200, "ready"},
		{"stopping", phaseStopping, nil, 503, "not ready: shutting down"},
		{"checks fine", phaseServing, []check{{"shared", true, ""}}, 200, "ready"},
		{"degraded", phaseServing, []check{{"shared", true, "redis unreachable, local state"}, {"other", true, ""}},
			200, "degraded: shared: redis unreachable, local state"},
		{"not ready wins over degraded", phaseServing, []check{{"a", true, "slow"}, {"b", false, "down"}, {"c", false, "off"}},
			503, "not ready: b: down; c: off"},
		{"checks do not matter while stopping", phaseStopping, []check{{"shared", true, "degraded"}}, 503, "not ready: shutting down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &readiness{}
			r.set(c.phase)
			for _, ch := range c.checks {
				r.addCheck(ch.name, func() (bool, string) { return ch.ready, ch.reason })
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != c.code || rec.Body.String() != c.body+"\n" {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), c.code, c.body+"\n")
			}
		})
	}
}

// TestReadyz: on the admin listener, /readyz is 503 before serve, 200
// while serving, and 503 while requests in flight drain at shutdown (the
// admin listener still answers then); /healthz is 200 throughout.
func TestReadyz(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		arrived <- struct{}{}
		<-release
	}))
	defer o.Close()
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll() // before o.Close, which waits for the handler
	cfg := config.Default()
	cfg.AllowPrivate = true
	cfg.ShutdownTimeout = 10 * time.Second
	s, err := New(cfg, io.Discard, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	get := func(base, path string) string {
		t.Helper()
		if base == "" { // before serve: the handler itself
			rec := httptest.NewRecorder()
			s.admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			return rec.Result().Status[:3] + " " + strings.TrimSpace(rec.Body.String())
		}
		resp, err := http.Get(base + path)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status[:3] + " " + strings.TrimSpace(string(b))
	}
	if got := get("", "/readyz"); got != "503 not ready: starting" {
		t.Errorf("/readyz before serve: got %q, want \"503 not ready: starting\"", got)
	}
	proxyLn, _ := net.Listen("tcp", "127.0.0.1:0")
	adminLn, _ := net.Listen("tcp", "127.0.0.1:0")
	admin := "http://" + adminLn.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, proxyLn, adminLn) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return get(admin, "/readyz") == "200 ready" }, "/readyz 200 ready while serving")
	if got := get(admin, "/healthz"); got != "200 ok" {
		t.Errorf("/healthz while serving: got %q, want \"200 ok\"", got)
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(t, "http://"+proxyLn.Addr().String()))}}
		if resp, err := c.Get(o.URL + "/slow"); err == nil {
			resp.Body.Close()
		}
	})
	<-arrived
	cancel()
	waitFor(t, func() bool { return get(admin, "/readyz") == "503 not ready: shutting down" },
		"/readyz 503 while the request in flight drains")
	if got := get(admin, "/healthz"); got != "200 ok" {
		t.Errorf("/healthz while draining: got %q, want \"200 ok\"", got)
	}
	releaseAll()
	wg.Wait()
}

// waitFor polls cond for up to 5s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5s for %s", what)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
