package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// politeOrigin serves robots.txt and answers every other path with the
// status of next (default 200), recording when each request came: by the
// kernel's receive timestamp (testkit.ArrivedAt; see testkit/timing.go).
type politeOrigin struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []arrival
	next     func(w http.ResponseWriter) int
}

// arrival is when a request reached the origin (wall clock), and whether
// the kernel stamped it (else it is when the handler ran: too late).
type arrival struct {
	at      time.Time
	stamped bool
}

func newPoliteOrigin(t *testing.T, robots string) *politeOrigin {
	t.Helper()
	o := &politeOrigin{}
	o.Server = testkit.NewStampedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, stamped := testkit.ArrivedAt(r)
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte(robots))
			return
		}
		o.mu.Lock()
		o.arrivals = append(o.arrivals, arrival{at, stamped})
		next := o.next
		o.mu.Unlock()
		status := http.StatusOK
		if next != nil {
			status = next(w)
		}
		w.WriteHeader(status)
	}))
	return o
}

func (o *politeOrigin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.arrivals)
}

func (o *politeOrigin) seen() []arrival {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]arrival(nil), o.arrivals...)
}

func politeHarness(t *testing.T, o politeness.Options) *harness {
	t.Helper()
	return newHarness(t, harnessOptions{policy: func(po *policy.Options) { po.Politeness = politeness.New(o).Politeness() }})
}

// TestCrawlDelayWait: requests early for their turn wait for it, and the
// origin receives each one at least the crawl delay after the previous
// one left the proxy (counted from the send, as serve does). The three
// requests are sent together, so that two of them reach the proxy before
// their turn however late a busy machine lets a client send: one sent
// after the previous answer may come after its turn, and rightly not
// wait.
func TestCrawlDelayWait(t *testing.T) {
	const delay = 200 * time.Millisecond
	o := newPoliteOrigin(t, "User-agent: *\nCrawl-delay: 0.2\n")
	r := newSentRecorder()
	h := politeHarness(t, politeness.Options{CrawlDelay: true, CountFromSend: true, SendWithin: time.Minute, Scheduler: r})
	clock := testkit.NewClockCheck()
	var wg sync.WaitGroup
	statuses := make([]int, 3)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", o.URL+"/page", nil)
			req.Header.Set("User-Agent", "Bot/1.0")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i, st)
		}
	}
	checkSpacing(t, o, r, delay, clock)
	lines := h.audit.WaitLines(t, 3)
	waited := 0
	for _, l := range lines {
		if l["waited_ms"] == nil {
			assertFields(t, l, map[string]any{"decision": "allow", "crawl_delay_ms": 200.0, "reason": "no-matching-rule", "wait_reason": nil})
			continue
		}
		waited++
		assertFields(t, l, map[string]any{"decision": "allow", "reason": "crawl-delay", "robots_reason": "no-matching-rule",
			"wait_reason": "crawl-delay"})
		// How long it waited is what was left of the delay when it
		// reached the proxy: that it waited is the proxy's. The
		// spacing is checked above.
		if w, _ := l["waited_ms"].(float64); w <= 0 {
			t.Errorf("waited_ms: got %v, want some of the 200ms delay (line %v)", l["waited_ms"], l)
		}
	}
	if waited != 2 {
		t.Errorf("%d of 3 requests sent together waited for their turn, want 2", waited)
	}
}

func TestCrawlDelayReject(t *testing.T) {
	o := newPoliteOrigin(t, "User-agent: *\nAllow: /\nCrawl-delay: 5\n")
	h := politeHarness(t, politeness.Options{CrawlDelay: true, Reject: true})
	h.do(t, "GET", o.URL+"/a", "Bot/1.0", "")
	resp, body := h.do(t, "GET", o.URL+"/b", "Bot/1.0", "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "5" ||
		resp.Header.Get(proxy.HeaderReason) != "crawl-delay" {
		t.Fatalf("second request: status %d, Retry-After %q, reason %q; want 429, 5, crawl-delay (body %q)",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get(proxy.HeaderReason), body)
	}
	if got := resp.Header.Get(proxy.HeaderRule); got != "" {
		t.Errorf("%s on a 429: got %q, want none (no rule refused it)", proxy.HeaderRule, got)
	}
	// Another product token has its own spacing.
	if resp, _ := h.do(t, "GET", o.URL+"/c", "OtherBot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("another token: status %d, want 200", resp.StatusCode)
	}
	if n := o.count(); n != 2 {
		t.Errorf("requests at the origin: got %d, want 2", n)
	}
	l := h.audit.Lines(t)[1]
	assertFields(t, l, map[string]any{"decision": "deny", "reason": "crawl-delay", "robots_reason": "rule", "status": 429.0, "waited_ms": 0.0})
	if ra, _ := l["retry_after_ms"].(float64); ra < 4900 || ra > 5000 {
		t.Errorf("retry_after_ms: got %v, want about 5000", l["retry_after_ms"])
	}
	if got := h.counter(t, "robotsproxy_requests_total", "crawl-delay"); got != 1 {
		t.Errorf("robotsproxy_requests_total{reason=crawl-delay}: got %v, want 1", got)
	}
}

func TestBackoff(t *testing.T) {
	o := newPoliteOrigin(t, "User-agent: *\nAllow: /\n")
	var n int
	o.next = func(w http.ResponseWriter) int {
		n++
		if n == 1 {
			w.Header().Set("Retry-After", "30")
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	h := politeHarness(t, politeness.Options{Backoff: true, Reject: true})
	if resp, _ := h.do(t, "GET", o.URL+"/a", "Bot/1.0", ""); resp.StatusCode != 503 {
		t.Fatalf("first request: status %d, want the origin's 503", resp.StatusCode)
	}
	resp, _ := h.do(t, "GET", o.URL+"/b", "Bot/1.0", "")
	if resp.StatusCode != 429 || resp.Header.Get(proxy.HeaderReason) != "backoff" {
		t.Fatalf("during the pause: status %d, reason %q; want 429, backoff", resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
	}
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 29 || ra > 30 {
		t.Errorf("Retry-After: got %q, want 30", resp.Header.Get("Retry-After"))
	}
	lines := h.audit.Lines(t)
	assertFields(t, lines[0], map[string]any{"decision": "allow", "status": 503.0, "backoff_ms": 30000.0})
	assertFields(t, lines[1], map[string]any{"decision": "deny", "reason": "backoff", "robots_reason": "rule", "status": 429.0})
}

func TestConcurrencyCapAcrossTokens(t *testing.T) {
	o := newPoliteOrigin(t, "User-agent: *\nAllow: /\n")
	release := make(chan struct{})
	o.next = func(http.ResponseWriter) int { <-release; return 200 }
	h := politeHarness(t, politeness.Options{MaxConcurrentPerHost: 1, Reject: true})
	done := make(chan int)
	go func() {
		resp, _ := h.do(t, "GET", o.URL+"/slow", "Bot/1.0", "")
		done <- resp.StatusCode
	}()
	for o.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	resp, _ := h.do(t, "GET", o.URL+"/other", "OtherBot/1.0", "")
	close(release)
	if resp.StatusCode != 429 || resp.Header.Get(proxy.HeaderReason) != "host-concurrency" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("second in flight: status %d, reason %q, Retry-After %q; want 429, host-concurrency, 1",
			resp.StatusCode, resp.Header.Get(proxy.HeaderReason), resp.Header.Get("Retry-After"))
	}
	if got := <-done; got != 200 {
		t.Errorf("first: status %d, want 200", got)
	}
	// The first request's slot is back once its audit line is written.
	h.audit.WaitLines(t, 2)
	if resp, _ := h.do(t, "GET", o.URL+"/again", "OtherBot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("after the first finished: status %d, want 200", resp.StatusCode)
	}
}

// TestConcurrencySlotBackAfterAbandon: a request whose line Abandon wrote
// (shutdown gave up on it) still gives its in-flight slot back when its
// handler returns; the slot is not tied to the handler writing the line.
func TestConcurrencySlotBackAfterAbandon(t *testing.T) {
	o := newPoliteOrigin(t, "User-agent: *\nAllow: /\n")
	release := make(chan struct{})
	o.next = func(http.ResponseWriter) int { <-release; return 200 }
	h := politeHarness(t, politeness.Options{MaxConcurrentPerHost: 1, Reject: true})
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.do(t, "GET", o.URL+"/slow", "Bot/1.0", "")
	}()
	for o.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	if n := h.proxy.Abandon(); n != 1 {
		t.Fatalf("Abandon: %d requests, want 1", n)
	}
	close(release) // and every later request passes at once
	<-done
	for h.proxy.InFlight() > 0 {
		time.Sleep(time.Millisecond)
	}
	if resp, _ := h.do(t, "GET", o.URL+"/again", "Bot/1.0", ""); resp.StatusCode != 200 {
		t.Errorf("after the abandoned request ended: status %d, want 200 (its slot was never given back)", resp.StatusCode)
	}
}
