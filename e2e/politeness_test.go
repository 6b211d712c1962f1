package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// Politeness is measured at the origin: the kernel's receive timestamp
// says when each request came (testkit.ArrivedAt). The default run uses
// Crawl-delay 0.5 and 20 requests (about 10 s);
// ROBOTSPROXY_POLITENESS_FULL=1 runs the full figures, Crawl-delay 2 and
// 30 requests (about 60 s).
//
// Each gap allows for what testkit/timing.go says: an arrival is never
// earlier than the write that sent it, and a time the origin takes before
// writing an answer is no later than the proxy reads that answer, so a
// back-off gap (from such a time to the next arrival) is short by the
// clocks' drift at most (testkit.ClockCheck: the stamps are on the wall
// clock, the proxy keeps time on the monotonic one). A gap between two
// arrivals may also lose deliverySlack.

// deliverySlack is how much of a crawl delay a gap between two arrivals
// may lose to loopback delivery (2 ms). The proxy sends each request at
// least the delay after the previous one's write returned; the kernel
// stamps a request as it delivers it, which is inside the sender's write
// unless it defers the delivery to its softirq thread (its budget spent,
// or, before Linux 6.3, whenever that thread runs), which a busy machine
// runs late: the earlier request is then stamped after the proxy's write
// returned. The proxy's own tests see its writes and need none
// (proxy/send_test.go, checkSpacing); TestArrivedAtWithinTheWrite
// (internal/testkit) logs how often it happens.
const deliverySlack = 2 * time.Millisecond

// timedOrigin records the arrival of every request but robots.txt fetches
// and answers with respond's status (200 when nil).
type timedOrigin struct {
	srv     *httptest.Server
	robots  string
	respond func(n int, w http.ResponseWriter) int // n: 0-based arrival

	mu       sync.Mutex
	arrivals []arrival
}

// arrival is one request as the origin saw it.
type arrival struct {
	path     string
	at       time.Time // when its first octets reached the origin (arrivedAt)
	stamped  bool      // at is the kernel's timestamp (else the handler's clock)
	status   int
	answered time.Time // taken just before the answer was written: no later than the proxy read it
}

func newTimedOrigin(t *testing.T, robots string, respond func(int, http.ResponseWriter) int) *timedOrigin {
	o := &timedOrigin{robots: robots, respond: respond}
	o.srv = testkit.NewStampedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now, stamped := testkit.ArrivedAt(r)
		if r.URL.Path == "/robots.txt" && strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
			_, _ = io.WriteString(w, o.robots)
			return
		}
		o.mu.Lock()
		n := len(o.arrivals)
		o.arrivals = append(o.arrivals, arrival{path: r.RequestURI, at: now, stamped: stamped})
		o.mu.Unlock()
		status := http.StatusOK
		if o.respond != nil {
			status = o.respond(n, w)
		}
		o.mu.Lock()
		o.arrivals[n].status, o.arrivals[n].answered = status, time.Now()
		o.mu.Unlock()
		w.WriteHeader(status) // sent when the handler returns
		_, _ = io.WriteString(w, "origin:"+r.RequestURI)
	}))
	return o
}

func (o *timedOrigin) seen() []arrival {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.arrivals)
}

// politeRun sends n requests (/req/0 ... /req/n-1) through the proxy from
// clients concurrent clients, and returns each request's status by index.
func politeRun(t *testing.T, p *proxyProcess, o *timedOrigin, clients, n int, ua string) []int {
	t.Helper()
	proxyURL, _ := url.Parse("http://" + p.proxyAddr)
	client := &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), MaxIdleConnsPerHost: clients}}
	statuses := make([]int, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range next {
				req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/req/%d", o.srv.URL, i), nil)
				req.Header.Set("User-Agent", ua)
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			}
		})
	}
	wg.Wait()
	return statuses
}

// checkEachOnce checks that the origin saw /req/0 ... /req/n-1 once each
// and the audit log has one line for each, with the status the client got.
func checkEachOnce(t *testing.T, p *proxyProcess, o *timedOrigin, statuses []int) []map[string]any {
	t.Helper()
	n := len(statuses)
	seen := map[string]int{}
	for _, a := range o.seen() {
		seen[a.path]++
	}
	lines := p.auditLines(t, n)
	logged := map[string]map[string]any{}
	for _, l := range lines {
		u, _ := l["url"].(string)
		if _, dup := logged[u]; dup {
			t.Errorf("audit: two lines for %s", u)
		}
		logged[u] = l
	}
	for i := range n {
		path := fmt.Sprintf("/req/%d", i)
		if seen[path] != 1 {
			t.Errorf("origin saw %s %d times, want once", path, seen[path])
		}
		l := logged[o.srv.URL+path]
		if l == nil {
			t.Errorf("audit: no line for %s", path)
			continue
		}
		if got, _ := l["status"].(float64); int(got) != statuses[i] || l["decision"] != "allow" {
			t.Errorf("audit line of %s: status %v, decision %v; want %d, allow", path, l["status"], l["decision"], statuses[i])
		}
	}
	if len(seen) != n || len(lines) != n {
		t.Errorf("origin saw %d distinct paths, audit has %d lines; want %d each", len(seen), len(lines), n)
	}
	return lines
}

// gapStats returns the smallest, mean and largest gap between consecutive
// arrivals.
func gapStats(as []arrival) (lo, mean, hi time.Duration) {
	lo = time.Hour
	for i := 1; i < len(as); i++ {
		g := as[i].at.Sub(as[i-1].at)
		lo, hi, mean = min(lo, g), max(hi, g), mean+g
	}
	return lo, mean / time.Duration(max(1, len(as)-1)), hi
}

func TestCrawlDelaySpacingAtTheOrigin(t *testing.T) {
	delay, n := "0.5", 20
	if os.Getenv("ROBOTSPROXY_POLITENESS_FULL") == "1" {
		delay, n = "2", 30
	}
	const clients = 20
	d, _ := time.ParseDuration(delay + "s")
	o := newTimedOrigin(t, "User-agent: *\nAllow: /\nCrawl-delay: "+delay+"\n", nil)
	p := startProxy(t, "politeness:\n  crawl_delay: enforce\n  max_wait: 3m\n")
	clock := testkit.NewClockCheck()
	start := time.Now()
	statuses := politeRun(t, p, o, clients, n, "PoliteBot/1.0")
	took := time.Since(start)
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("request %d: status %d, want 200", i, s)
		}
	}
	lines := checkEachOnce(t, p, o, statuses)
	as := o.seen()
	slack := deliverySlack + clock.Drift()
	for i := 1; i < len(as); i++ {
		if !as[i].stamped || !as[i-1].stamped {
			continue // counted below
		}
		if g := as[i].at.Sub(as[i-1].at); g < d-slack {
			t.Errorf("origin: %s came %v after %s, want at least %v - %v", as[i].path, g, as[i-1].path, d, slack)
		}
	}
	waited := 0
	for _, l := range lines {
		if l["wait_reason"] == "crawl-delay" {
			waited++
		}
		if l["crawl_delay_ms"] != float64(d.Milliseconds()) {
			t.Errorf("audit: crawl_delay_ms %v, want %d", l["crawl_delay_ms"], d.Milliseconds())
		}
	}
	if waited < n-clients/2 {
		t.Errorf("audit: %d lines with wait_reason crawl-delay, want most of %d", waited, n)
	}
	m := scrapeMetrics(t, p.adminAddr)
	if got := m[`robotsproxy_politeness_requests_total{cause="crawl-delay",outcome="waited"}`]; got < float64(waited) {
		t.Errorf("metrics: %v requests waited for crawl-delay, want at least %d", got, waited)
	}
	if got := m[`robotsproxy_politeness_wait_seconds_count{cause="crawl-delay"}`]; got < float64(waited) {
		t.Errorf("metrics: wait histogram count %v, want at least %d", got, waited)
	}
	unstamped := 0
	for _, a := range as {
		if !a.stamped {
			unstamped++
		}
	}
	if unstamped > 0 {
		t.Logf("%d of %d arrivals have no kernel timestamp: the gaps next to them are not measured", unstamped, len(as))
	}
	lo, mean, hi := gapStats(as)
	t.Logf("crawl-delay %ss, %d clients, %d requests in %v: gaps at the origin min %v mean %v max %v",
		delay, clients, n, took.Round(time.Millisecond), lo.Round(time.Microsecond), mean.Round(time.Microsecond), hi.Round(time.Microsecond))
}

// waitedSlack is how much less than a back-off pause the audit line of
// the request after it may say it waited (50 ms): waited_ms adds up the
// request's sleeps, not the time between them (reading the pause,
// reserving its slot again), which a busy machine stretches. It is not a
// gap at the origin: that one is measured above, with no such slack.
const waitedSlack = 50 * time.Millisecond

// TestBackoffAtTheOrigin: the origin answers 429 or 503 to some requests;
// no request reaches it before the pause it asked for has passed. At most
// one request is in flight (max_concurrent_per_host: 1), so none was on
// its way when the answer came.
func TestBackoffAtTheOrigin(t *testing.T) {
	const clients, n = 20, 30
	pauses := map[int]time.Duration{ // arrival -> pause the answer asks for
		4:  time.Second,            // 429, Retry-After: 1
		12: time.Second,            // 503, Retry-After: 1
		20: 400 * time.Millisecond, // 429 without Retry-After: default_backoff
		21: 800 * time.Millisecond, // again, before a success: doubled
	}
	respond := func(i int, w http.ResponseWriter) int {
		switch i {
		case 4:
			w.Header().Set("Retry-After", "1")
			return http.StatusTooManyRequests
		case 12:
			w.Header().Set("Retry-After", "1")
			return http.StatusServiceUnavailable
		case 20, 21:
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}
	o := newTimedOrigin(t, "User-agent: *\nAllow: /\n", respond)
	p := startProxy(t, "politeness:\n  backoff: enforce\n  default_backoff: 400ms\n  max_concurrent_per_host: 1\n")
	clock := testkit.NewClockCheck()
	statuses := politeRun(t, p, o, clients, n, "PoliteBot/1.0")
	lines := checkEachOnce(t, p, o, statuses)
	as := o.seen()
	answered := map[int]int{}
	for _, s := range statuses {
		answered[s]++
	}
	if answered[200] != n-4 || answered[429] != 3 || answered[503] != 1 {
		t.Errorf("statuses: got %v, want %d×200, 3×429, 1×503 (the origin's)", answered, n-4)
	}
	for i, pause := range pauses {
		if i+1 >= len(as) {
			t.Fatalf("origin saw %d requests, want %d", len(as), n)
		}
		if g, slack := as[i+1].at.Sub(as[i].answered), clock.Drift(); g < pause-slack {
			t.Errorf("origin: %s came %v after the %d answer to %s, want at least %v - %v",
				as[i+1].path, g, as[i].status, as[i].path, pause, slack)
		} else {
			t.Logf("pause %v asked with %d: next request %v later", pause, as[i].status, g.Round(time.Millisecond))
		}
	}
	byURL := map[string]map[string]any{}
	for _, l := range lines {
		byURL[l["url"].(string)] = l
		if ms, ok := l["backoff_ms"].(float64); ok && ms <= 0 {
			t.Errorf("audit: backoff_ms %v, want > 0", ms)
		}
	}
	for i, pause := range pauses {
		asked, next := byURL[o.srv.URL+as[i].path], byURL[o.srv.URL+as[i+1].path]
		if ms, _ := asked["backoff_ms"].(float64); ms != float64(pause.Milliseconds()) {
			t.Errorf("audit line of %s (answered %d): backoff_ms %v, want %d", as[i].path, as[i].status, asked["backoff_ms"], pause.Milliseconds())
		}
		if ms, _ := next["waited_ms"].(float64); ms < float64((pause - waitedSlack).Milliseconds()) {
			t.Errorf("audit line of %s (after the pause): waited_ms %v, want at least %v", as[i+1].path, next["waited_ms"], pause)
		}
	}
	m := scrapeMetrics(t, p.adminAddr)
	if got := m[`robotsproxy_politeness_requests_total{cause="backoff",outcome="waited"}`]; got < float64(len(pauses)) {
		t.Errorf("metrics: %v requests waited for backoff, want at least %d", got, len(pauses))
	}
}
