package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// payConfig is a configuration that pays for ExampleBot at most max a
// request within budget a day, sharing the spend through redisURL when it
// is not "", with extra appended.
func payConfig(max, budget, redisURL, extra string) string {
	c := fmt.Sprintf("payments:\n  enabled: true\n  identities:\n    - product_token: ExampleBot\n      max_price: %q\n      budget: %q\n      currency: USD\n", max, budget)
	if redisURL != "" {
		c += fmt.Sprintf("shared:\n  redis_url: %q\n", redisURL)
	}
	return c + extra
}

// payClient is a client of the proxy at addr that waits at most wait
// for each answer.
func payClient(addr string, wait time.Duration) *http.Client {
	proxyURL, _ := url.Parse("http://" + addr)
	return &http.Client{Timeout: wait, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), MaxIdleConnsPerHost: 64}}
}

// payGet sends one GET as ExampleBot and returns its status and
// X-Robotsproxy-Not-Paid; status 0 when the client gave up.
func payGet(c *http.Client, target string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(payments.HeaderNotPaid)
}

// TestPaymentsHostileOriginBinary: through the binary, an origin that
// announces 0.01 and charges 0.03 gets one payment, recorded with its true
// charge and payment_breach, and then nothing (not_paid breach); a client
// that leaves after the paid retry was sent leaves the price committed, so
// six aborts and a completed request agree to no more than the budget
// allows (2 of 0.01).
func TestPaymentsHostileOriginBinary(t *testing.T) {
	t.Run("overcharge", func(t *testing.T) {
		o := paytest.New(t, "USD 0.01")
		o.SetCharge("USD 0.03")
		p := startProxy(t, payConfig("0.05", "0.05", "", ""))
		c := payClient(p.proxyAddr, 10*time.Second)
		for i := range 8 {
			status, notPaid := payGet(c, fmt.Sprintf("%s/page/%d", o.URL, i))
			want, wantNotPaid := 402, "breach"
			if i == 0 {
				want, wantNotPaid = 200, ""
			}
			if status != want || notPaid != wantNotPaid {
				t.Fatalf("request %d: %d not paid %q, want %d %q", i, status, notPaid, want, wantNotPaid)
			}
		}
		if o.Paid() != 1 {
			t.Errorf("origin paid %d times, want 1", o.Paid())
		}
		lines := p.auditLines(t, 8)
		var breach, blocked int
		for _, l := range lines {
			switch {
			case l["payment_breach"] == "over-agreed" && l["charged"] == "0.03" && l["price"] == "0.01":
				breach++
			case l["not_paid"] == "breach":
				blocked++
			}
		}
		if breach != 1 || blocked != 7 {
			t.Errorf("audit: %d breach lines, %d blocked; want 1, 7", breach, blocked)
		}
	})
	t.Run("abort", func(t *testing.T) {
		o := paytest.New(t, "USD 0.01")
		o.SetHangPaid(true)
		p := startProxy(t, payConfig("0.01", "0.02", "", ""))
		for i := range 6 {
			if status, _ := payGet(payClient(p.proxyAddr, 500*time.Millisecond), fmt.Sprintf("%s/abort/%d", o.URL, i)); status != 0 && status != 402 {
				t.Fatalf("abort %d: %d, want no answer or the 402", i, status)
			}
		}
		o.SetHangPaid(false)
		if status, notPaid := payGet(payClient(p.proxyAddr, 10*time.Second), o.URL+"/done"); status != 402 || notPaid != "over-budget" {
			t.Errorf("after the aborts: %d %q, want 402 over-budget (the aborted prices stay committed)", status, notPaid)
		}
		if o.Paid() != 2 {
			t.Errorf("the price was agreed %d times against a budget of two, want 2", o.Paid())
		}
		unknown := 0
		for _, l := range p.auditLines(t, 7) {
			if l["not_paid"] == "unknown-outcome" {
				unknown++
			}
		}
		if unknown != 2 {
			t.Errorf("%d audit lines not_paid unknown-outcome, want 2", unknown)
		}
	})
}

// TestPaymentsCeilingSharedStore: under each hostile origin, 30 concurrent
// requests through one binary and through two sharing one redis-server
// never commit more than the day's budget in the store, and never agree to
// the price more often than the budget allows.
func TestPaymentsCeilingSharedStore(t *testing.T) {
	for _, h := range paytest.HostileOrigins {
		for _, replicas := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d proxies", h.Name, replicas), func(t *testing.T) {
				rs := startRedisServer(t)
				o := paytest.New(t, "USD 0.01")
				h.Setup(o)
				var clients []*http.Client
				for range replicas {
					p := startProxy(t, payConfig("0.05", "0.05", rs.URL(), ""))
					clients = append(clients, payClient(p.proxyAddr, max(h.Wait, 10*time.Second)))
				}
				if h.Wait > 0 {
					for i := range clients {
						clients[i].Timeout = h.Wait
					}
				}
				var wg sync.WaitGroup
				for i := range 30 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						payGet(clients[i%len(clients)], fmt.Sprintf("%s/page/%d", o.URL, i))
					}()
				}
				wg.Wait()
				opt, err := redis.ParseURL(rs.URL())
				if err != nil {
					t.Fatal(err)
				}
				rdb := redis.NewClient(opt)
				defer rdb.Close()
				key := "robotsproxy:v2:spend:{token:examplebot} USD " + payments.DayOf(time.Now())
				n, err := rdb.Get(context.Background(), key).Int64()
				if err != nil {
					t.Fatalf("GET %q: %v", key, err)
				}
				committed, budget := payments.Amount(n), payments.Amount(50_000)
				t.Logf("origin agreed %d, billed %v; committed %s", o.Paid(), o.Charged(), committed)
				if committed > budget || committed == 0 {
					t.Errorf("committed %s, want more than 0 and at most the budget %s", committed, budget)
				}
				if o.Paid() > 5 {
					t.Errorf("the price was agreed %d times, the budget allows 5", o.Paid())
				}
				if billed := o.Charged()["USD"]; billed <= budget && committed < billed {
					t.Errorf("the origin billed %s, only %s committed", billed, committed)
				}
			})
		}
	}
}

// TestReportModeBinaryNeitherSignsNorPays: with mode: report, signing and
// payments on, a request robots.txt disallows is forwarded (402 as the
// origin sent it) unsigned and unpaid, its audit line says
// egress_skipped and not_paid report-only; an allowed one is signed and
// paid.
func TestReportModeBinaryNeitherSignsNorPays(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	if _, err := signing.GenerateKeyDir(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	o := paytest.New(t, "USD 0.01")
	o.Files = map[string]string{"/robots.txt": "User-agent: *\nDisallow: /private\n"}
	p := startProxy(t, payConfig("0.05", "1", "", fmt.Sprintf(`mode: report
signing:
  enabled: true
  identities:
    - product_token: ExampleBot
      keys: [%s]
      signature_agent: https://crawler.example
`, dir)))
	c := payClient(p.proxyAddr, 10*time.Second)
	if status, notPaid := payGet(c, o.URL+"/private/paid"); status != 402 || notPaid != "" {
		t.Errorf("report-only: %d not paid %q, want the origin's 402 as sent", status, notPaid)
	}
	if status, _ := payGet(c, o.URL+"/public"); status != 200 {
		t.Errorf("allowed: %d, want 200 (paid)", status)
	}
	if o.Paid() != 1 {
		t.Errorf("origin paid %d times, want 1 (the allowed request)", o.Paid())
	}
	lines := p.auditLines(t, 2)
	var private, public map[string]any
	for _, l := range lines {
		switch l["url"] {
		case o.URL + "/private/paid":
			private = l
		case o.URL + "/public":
			public = l
		}
	}
	if private == nil || private["egress_skipped"] != "report-only" || private["not_paid"] != "report-only" ||
		private["enforced"] != false || private["signature_keyid"] != nil {
		t.Errorf("report-only line %v", private)
	}
	if public == nil || public["signature_keyid"] == nil || public["charged"] != "0.01" || public["egress_skipped"] != nil {
		t.Errorf("allowed line %v", public)
	}
	signed := 0
	for _, hd := range o.Headers() {
		if hd.Get("Signature") != "" {
			signed++
		}
	}
	if signed != 2 {
		t.Errorf("%d requests reached the origin signed, want 2 (the allowed one and its paid retry)", signed)
	}
}
