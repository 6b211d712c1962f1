package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

// BenchmarkWarmAllowed sends an allowed request for an authority whose
// robots.txt is cached through an in-process robotsproxy, without and
// with shared.redis_url: the in-process cache answers both, so the shared
// store adds no round trip and the two are within noise.
func BenchmarkWarmAllowed(b *testing.B) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer origin.Close()
	redisURL := fleet.StartRedis(b)
	for _, tc := range []struct{ name, url string }{{"shared", redisURL}, {"local", ""}, {"shared", redisURL}, {"local", ""}} {
		b.Run(tc.name, func(b *testing.B) {
			client := startServer(b, tc.url)
			get := func() {
				resp, err := client.Get(origin.URL + "/public/page")
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			get() // warm the cache
			b.ReportAllocs()
			for b.Loop() {
				get()
			}
		})
	}
}

// TestWarmPathMakesNoRoundTrip: once an authority's robots.txt is cached
// in the process, its requests send no command to the shared store.
func TestWarmPathMakesNoRoundTrip(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}))
	defer origin.Close()
	redisURL := fleet.StartRedis(t)
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	client := startServer(t, redisURL)
	commands := func() int64 {
		info := rdb.Info(context.Background(), "stats").Val()
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatal("INFO stats: no total_commands_processed")
		return 0
	}
	get := func(path string, want int) {
		resp, err := client.Get(origin.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: got %d, want %d", path, resp.StatusCode, want)
		}
	}
	get("/public", http.StatusOK) // cold: read, lock, store, unlock
	before := commands()
	for i := range 100 {
		get(fmt.Sprintf("/public/%d", i), http.StatusOK)
		get(fmt.Sprintf("/private/%d", i), http.StatusForbidden)
	}
	// INFO itself is one command.
	if got := commands() - before - 1; got != 0 {
		t.Errorf("commands sent to the store by 200 warm requests: got %d, want 0", got)
	}
}

// startServer runs robotsproxy in-process on a loopback port until the
// benchmark ends and returns a client that uses it as its proxy.
func startServer(b testing.TB, redisURL string) *http.Client {
	cfg := config.Default()
	cfg.Listen, cfg.AdminListen, cfg.AllowPrivate = "127.0.0.1:0", "", true
	cfg.Shared.RedisURL = redisURL
	cfg.DataDir = b.TempDir() // its interception CA, never in ~/.local/state
	logs := &listenLog{}
	s, err := server.New(cfg, io.Discard, zerolog.New(logs))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx, server.RunOptions{}); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	addr := ""
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		addr = logs.addr()
	}
	if addr == "" {
		b.Fatal("robotsproxy: not listening after 10s")
	}
	proxyURL, _ := url.Parse("http://" + addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
}

// listenLog keeps the server's log to find the proxy's "listening" line.
type listenLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *listenLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *listenLog) addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(l.b.String(), "\n") {
		var m struct{ Message, Listener, Addr string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Message == "listening" && m.Listener == "proxy" {
			return m.Addr
		}
	}
	return ""
}
