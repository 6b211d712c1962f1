package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestSharedStoreUnreachable: with shared.redis_url on a port nobody
// listens on, the proxy starts, decides as a standalone proxy, and shows
// the degraded state in /readyz (200) and robotsproxy_shared_up 0.
func TestSharedStoreUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "redis://" + ln.Addr().String()
	ln.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}))
	defer origin.Close()
	cases := []struct {
		name, url, readyz string
		up                float64
	}{
		{"off", "", "ready", 0},
		{"unreachable", deadURL, "degraded: shared: shared store unreachable", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, func(cfg *config.Config) { cfg.Shared.RedisURL = c.url })
			proxyURL, _ := url.Parse("http://" + ts.addr)
			client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
			for path, want := range map[string]int{"/public": 200, "/private/x": 403} {
				resp, err := client.Get(origin.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("%s: got %d, want %d", path, resp.StatusCode, want)
				}
			}
			rec := httptest.NewRecorder()
			ts.s.admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), c.readyz) {
				t.Errorf("/readyz: got %d %q, want 200 %q...", rec.Code, rec.Body.String(), c.readyz)
			}
			if got := ts.metric(t, "robotsproxy_shared_up"); got != c.up {
				t.Errorf("robotsproxy_shared_up: got %v, want %v", got, c.up)
			}
			if n := countMessages(t, ts.log, "shared store unreachable"); c.url != "" && n != 1 {
				t.Errorf("the outage was logged %d times, want once", n)
			}
		})
	}
}

// countMessages counts the log lines whose message starts with prefix.
func countMessages(t *testing.T, log *testkit.AuditSink, prefix string) int {
	n := 0
	for _, l := range log.Lines(t) {
		if m, _ := l["message"].(string); strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// TestRedisMessagesAreJSON: once a shared store is configured, go-redis's
// own messages (dials failing while the store is down) are operational log
// lines in JSON, not plain lines on stderr.
func TestRedisMessagesAreJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var log testkit.AuditSink
	cfg := config.Default()
	cfg.Shared.RedisURL = "redis://" + addr
	store, err := sharedStore(cfg, prometheus.NewRegistry(), zerolog.New(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := redis.NewClient(&redis.Options{Addr: addr}) // any client of the process
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for ctx.Err() == nil && countMessages(t, &log, "redis: ") == 0 {
		c.Ping(ctx)
	}
	for _, l := range log.Lines(t) { // lines fails on any line that is not JSON
		if m, _ := l["message"].(string); strings.HasPrefix(m, "redis: ") && l["component"] != "redis" {
			t.Errorf("go-redis line %v: want component redis", l)
		}
	}
	if countMessages(t, &log, "redis: ") == 0 {
		t.Errorf("no go-redis message reached the log: %q", log.String())
	}
}
