package paytest

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
)

// Concurrent sends n priced GETs to url at once, spread over the
// transports, each with an egress.Exchange for the product token token (as
// the proxy forwards them), and counts the paid answers (200 with crawler-charged, a
// record with charged) and the unpaid ones (402 with the not-paid header
// over-budget). Any other answer fails the test.
func Concurrent(t testing.TB, rts []http.RoundTripper, url, token string, n int) (paid, unpaid int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(rt http.RoundTripper) {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			x := &egress.Exchange{Identity: egress.Identity{Token: token}}
			resp, err := rt.RoundTrip(req.WithContext(egress.NewContext(context.Background(), x)))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case resp.StatusCode == 200 && resp.Header.Get("crawler-charged") != "" && x.Record.Charged != "" && x.Record.Currency != "":
				paid++
			case resp.StatusCode == 402 && resp.Header.Get(payments.HeaderNotPaid) == auditlog.NotPaidOverBudget && x.Record.NotPaid == auditlog.NotPaidOverBudget:
				unpaid++
			default:
				t.Errorf("unexpected answer %d %v, record %+v", resp.StatusCode, resp.Header, x.Record)
			}
		}(rts[i%len(rts)])
	}
	close(start)
	wg.Wait()
	return paid, unpaid
}

// Outcomes sends n priced GETs to url at once, spread over the
// transports, as Concurrent does, each given at most wait (0: no limit)
// before its client goes away, and counts them by outcome: "paid" (a
// record with charged and no not_paid), the record's not_paid value, or
// "error" for a request that got no answer. It accepts any outcome; the
// caller judges the counts.
func Outcomes(t testing.TB, rts []http.RoundTripper, url, token string, n int, wait time.Duration) map[string]int {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func(rt http.RoundTripper) {
			defer wg.Done()
			<-start
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if wait > 0 {
				ctx, cancel = context.WithTimeout(ctx, wait)
			}
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			x := &egress.Exchange{Identity: egress.Identity{Token: token}}
			resp, err := rt.RoundTrip(req.WithContext(egress.NewContext(ctx, x)))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case x.Record.NotPaid != "":
				out[x.Record.NotPaid]++
			case err != nil:
				out["error"]++
			case x.Record.Charged != "":
				out["paid"]++
			default:
				out["other"]++
			}
		}(rts[i%len(rts)])
	}
	close(start)
	wg.Wait()
	return out
}
