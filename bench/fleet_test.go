package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/fleet"
	"github.com/robotsproxy/robotsproxy/internal/redistest"
	"github.com/robotsproxy/robotsproxy/internal/server"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Parameters of BenchmarkFleetAtNetworkDistance.
const (
	fleetClients = 32               // keep-alive clients, each its own connection
	fleetSites   = 64               // authorities, 127.0.0.1 to 127.0.0.64, warmed first
	fleetDelay   = time.Millisecond // added to every segment towards the store
	fleetRound   = 2 * time.Second  // one measured round
	fleetRounds  = 7                // pairs of rounds (local, shared)
	fleetCap     = 4                // politeness.max_concurrent_per_host
	fleetRobots  = "User-agent: *\nCrawl-delay: 1\nDisallow: /private\n"
)

// BenchmarkFleetAtNetworkDistance puts a real redis-server behind a TCP
// proxy that delays every segment towards it by 1 ms (the store one network
// hop away), and runs an in-process robotsproxy with local politeness state
// and one with shared.redis_url through that proxy, both with Crawl-delay
// enforced (counted from the send, the default), back-off enforced and
// max_concurrent_per_host 4. Clients send requests, each a new (product
// token, site) pair over 64 warm sites, so that no request waits for its
// turn: what is measured is what the store costs an allowed request.
//
// Each of 7 pairs of rounds measures one client alone for 2 s against the
// local proxy, then against the shared one, then 32 keep-alive clients for
// 2 s against each. It logs per pair the round trip of a PING through the
// delay proxy (the floor of any store round trip), one client's median
// latency on each side and their difference, the requests per second of
// 32 clients on each side and their ratio, and, for the shared side, the
// round trips per request counted at the delay proxy (segments towards
// the store: a command or a pipeline each, the writes sent after the
// responses included) and the scripts the store ran per request (INFO
// commandstats). It reports the medians over the pairs. b.N is ignored:
// run it with -benchtime 1x.
//
//	cd bench && go test -run '^$' -bench FleetAtNetworkDistance -benchtime 1x -v .
func BenchmarkFleetAtNetworkDistance(b *testing.B) {
	rs := redistest.Start(b)
	store := strings.TrimPrefix(rs.URL(), "redis://")
	delay := startDelayProxy(b, store, fleetDelay)
	origin := startSites(b)
	local := startProxy(b, "")
	shared := startProxy(b, "redis://"+delay.addr())
	var token atomic.Int64
	for _, p := range []string{local, shared} { // warm every site's robots.txt
		for s := 1; s <= fleetSites; s++ {
			if _, err := get(newClient(p), siteURL(origin, s, 0), &token); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ratios, extra, trips1, trips32, cpuRatios []float64
	for round := range fleetRounds {
		rtt := delay.rtt(b, 200)
		var rps [2]float64
		var one [2]time.Duration
		var t1, t32, scripts float64
		var cpu [2]time.Duration // this process's CPU per request at 32 clients
		var idle float64         // the machine's idle share during the shared side's 32 clients
		for i, p := range []string{local, shared} {
			seg, calls := delay.segments(b), scriptCalls(b, store)
			n, lat := drive(b, p, origin, &token, 1)
			one[i] = lat
			if i == 1 {
				time.Sleep(100 * time.Millisecond) // the writes sent after the last responses
				t1 = float64(delay.segments(b)-seg) / float64(n)
			}
			seg, calls = delay.segments(b), scriptCalls(b, store)
			cpu0, idle0 := processCPU(), machineIdle()
			n, _ = drive(b, p, origin, &token, fleetClients)
			cpu[i], idle = (processCPU()-cpu0)/time.Duration(n), idle0.since()
			rps[i] = float64(n) / fleetRound.Seconds()
			if i == 1 {
				time.Sleep(100 * time.Millisecond)
				t32 = float64(delay.segments(b)-seg) / float64(n)
				scripts = float64(scriptCalls(b, store)-calls) / float64(n)
			}
		}
		ratios = append(ratios, rps[1]/rps[0])
		extra = append(extra, float64(one[1]-one[0])/float64(time.Millisecond))
		trips1, trips32 = append(trips1, t1), append(trips32, t32)
		if cpu[0] > 0 {
			cpuRatios = append(cpuRatios, float64(cpu[1])/float64(cpu[0]))
		}
		b.Logf("pair %d: PING through the delay %v; one client: p50 local %v, shared %v (+%v), %.2f round trips per request; "+
			"%d clients: local %.0f req/s, shared %.0f req/s, shared/local %.2f, %.2f round trips and %.2f scripts per request; "+
			"the benchmark process's CPU per request (proxy, clients, origin) local %v, shared %v; machine idle during the shared side %.0f%%",
			round+1, rtt.Round(time.Microsecond), one[0].Round(time.Microsecond), one[1].Round(time.Microsecond), (one[1] - one[0]).Round(time.Microsecond), t1,
			fleetClients, rps[0], rps[1], rps[1]/rps[0], t32, scripts, cpu[0].Round(time.Microsecond), cpu[1].Round(time.Microsecond), 100*idle)
	}
	b.ReportMetric(median(extra), "one-client-ms-over-local")
	b.ReportMetric(median(ratios), "shared/local")
	b.ReportMetric(median(trips1), "roundtrips/req-1")
	b.ReportMetric(median(trips32), "roundtrips/req-32")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "process-cpu/req-shared/local")
	}
}

// median returns the median of v (v is sorted).
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// scriptCalls returns how many scripts the store at addr has run
// (EVALSHA and EVAL calls, from INFO commandstats), read directly, not
// through the delay proxy.
func scriptCalls(b *testing.B, addr string) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "INFO commandstats\r\n"); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		b.Fatalf("INFO commandstats: %q, %v", head, err)
	}
	size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		b.Fatal(err)
	}
	n := 0
	for line := range strings.SplitSeq(string(body), "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(line, cmd); ok {
				calls, _, _ := strings.Cut(rest, ",")
				v, _ := strconv.Atoi(calls)
				n += v
			}
		}
	}
	return n
}

// fleetColdAuthorities is how many new authorities
// BenchmarkFleetColdAuthority measures.
const fleetColdAuthorities = 300

// BenchmarkFleetColdAuthority measures a cold authority's robots.txt
// through the shared store behind the 1 ms delay proxy of
// BenchmarkFleetAtNetworkDistance: a store miss (replica A claims the
// fetch, calls the origin, shares the result) and a store hit (replica B
// reads what A shared), one new authority at a time, each replica a
// fleet.Store of its own. The origin answers at once from memory, so
// what is measured is what the store costs. It reports the median of
// each and the round trips of each counted at the delay proxy. b.N is
// ignored: run it with -benchtime 1x.
//
//	cd bench && go test -run '^$' -bench FleetColdAuthority -benchtime 1x -v .
func BenchmarkFleetColdAuthority(b *testing.B) {
	rs := redistest.Start(b)
	delay := startDelayProxy(b, strings.TrimPrefix(rs.URL(), "redis://"), fleetDelay)
	newStore := func() *fleet.Store {
		s, err := fleet.New(fleet.Options{URL: "redis://" + delay.addr(), Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	a, hit := newStore(), newStore()
	body := []byte(fleetRobots)
	origin := func(_ context.Context, scheme, authority string) policy.Access {
		u := policy.RobotsURL(scheme, authority)
		return policy.Access{Result: policy.Successful, URL: u, FinalURL: u, Status: 200, MaxAge: -1,
			FetchedAt: time.Now(), Raw: body, SHA256: sha256.Sum256(body)}
	}
	ctx := context.Background()
	run := time.Now().UnixNano()
	a.Fetch(ctx, "https", "warm.example:443", origin) // loads the scripts
	hit.Fetch(ctx, "https", "warm.example:443", origin)
	var miss, read []time.Duration
	var missTrips, hitTrips int64
	for i := range fleetColdAuthorities {
		auth := fmt.Sprintf("cold%d-%d.example:443", run, i)
		seg := delay.segments(b)
		start := time.Now()
		a.Fetch(ctx, "https", auth, origin)
		miss = append(miss, time.Since(start))
		missTrips += delay.segments(b) - seg
		seg = delay.segments(b)
		start = time.Now() // the hit's own time, without the counts read from the relay
		if got := hit.Fetch(ctx, "https", auth, func(context.Context, string, string) policy.Access {
			b.Fatalf("%s: fetched from the origin, want a store hit", auth)
			return policy.Access{}
		}); got.Result != policy.Successful {
			b.Fatalf("%s: store hit %s, want successful", auth, got.Result)
		}
		read = append(read, time.Since(start))
		hitTrips += delay.segments(b) - seg
	}
	slices.Sort(miss)
	slices.Sort(read)
	n := float64(fleetColdAuthorities)
	b.Logf("%d cold authorities, store +%v: miss p50 %v p90 %v, %.2f round trips; hit p50 %v p90 %v, %.2f round trips",
		fleetColdAuthorities, fleetDelay, miss[len(miss)/2].Round(10*time.Microsecond), miss[len(miss)*9/10].Round(10*time.Microsecond),
		float64(missTrips)/n, read[len(read)/2].Round(10*time.Microsecond), read[len(read)*9/10].Round(10*time.Microsecond), float64(hitTrips)/n)
	b.ReportMetric(float64(miss[len(miss)/2].Microseconds())/1000, "ms/miss")
	b.ReportMetric(float64(read[len(read)/2].Microseconds())/1000, "ms/hit")
	b.ReportMetric(float64(missTrips)/n, "roundtrips/miss")
	b.ReportMetric(float64(hitTrips)/n, "roundtrips/hit")
}

// drive runs clients clients against the proxy at proxyURL for
// fleetRound and returns the requests done and their median latency.
func drive(b *testing.B, proxyURL, origin string, token *atomic.Int64, clients int) (int, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), fleetRound)
	defer cancel()
	var mu sync.Mutex
	var lats []time.Duration
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			client := newClient(proxyURL)
			var mine []time.Duration
			for i := 0; ctx.Err() == nil; i++ {
				start := time.Now()
				status, err := get(client, siteURL(origin, 1+(c+i*fleetClients)%fleetSites, i), token)
				if err != nil || status != http.StatusOK {
					b.Errorf("status %d, %v", status, err)
					return
				}
				if ctx.Err() == nil {
					mine = append(mine, time.Since(start))
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(lats) == 0 {
		b.Fatal("no request done")
	}
	slices.Sort(lats)
	return len(lats), lats[len(lats)/2]
}

// get sends one request with a new product token.
func get(c *http.Client, u string, token *atomic.Int64) (int, error) {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("User-Agent", "Bot"+letters(token.Add(1))+"/1.0")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// letters writes n in base 26 with the letters a to z: a product token has
// no digits (RFC 9309 2.2.1).
func letters(n int64) string {
	var b []byte
	for ; n > 0; n /= 26 {
		b = append(b, byte('a'+n%26))
	}
	return string(b)
}

func newClient(proxyURL string) *http.Client {
	u, _ := url.Parse(proxyURL)
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(u), MaxIdleConnsPerHost: 4}}
}

// siteURL is a page of site s (1 to 254) of the origin listening on port
// origin of every loopback address.
func siteURL(origin string, s, i int) string {
	return fmt.Sprintf("http://127.0.0.%d:%s/page/%d", s, origin, i)
}

// startSites serves fleetRobots and small pages on every loopback address
// and returns its port.
func startSites(b *testing.B) string {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, fleetRobots)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startProxy runs robotsproxy in-process with the benchmark's politeness
// and returns its proxy URL; redisURL "" keeps the state local.
func startProxy(b *testing.B, redisURL string) string {
	cfg := config.Default()
	cfg.Listen, cfg.AdminListen, cfg.AllowPrivate = "127.0.0.1:0", "", true
	cfg.Politeness.CrawlDelay, cfg.Politeness.Backoff = "enforce", "enforce"
	cfg.Politeness.MaxConcurrentPerHost = fleetCap
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
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if addr := logs.addr(); addr != "" {
			return "http://" + addr
		}
	}
	b.Fatal("robotsproxy: not listening after 10s")
	return ""
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
	for line := range strings.SplitSeq(l.b.String(), "\n") {
		var m struct{ Message, Listener, Addr string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Message == "listening" && m.Listener == "proxy" {
			return m.Addr
		}
	}
	return ""
}

// rtt returns the median of n round trips of a PING through the proxy to
// the store (a fresh connection): the delay plus what the proxy and the
// store take, the floor of any store round trip in the benchmark.
func (p *delayProxy) rtt(b *testing.B, n int) time.Duration {
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64)
	var d []time.Duration
	for range n {
		start := time.Now()
		if _, err := io.WriteString(c, "PING\r\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAtLeast(c, buf, len("+PONG\r\n")); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	return d[len(d)/2]
}
