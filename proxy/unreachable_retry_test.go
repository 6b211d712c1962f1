package proxy_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// TestUnreachableSaysWhenItIsRetried: the 403 for an unreachable
// robots.txt says when it was fetched and when it is fetched again
// (Options.UnreachableRetry after that), the same for the requests the
// cached result answers; with no UnreachableRetry it says nothing of it.
func TestUnreachableSaysWhenItIsRetried(t *testing.T) {
	for _, retry := range []time.Duration{90 * time.Second, 0} {
		t.Run(fmt.Sprint(retry), func(t *testing.T) {
			h := newHarness(t, harnessOptions{proxy: func(o *proxy.Options) { o.UnreachableRetry = retry }})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			for i := range 2 { // a fetch, then the cached result
				resp, body := h.do(t, "GET", "http://"+addr+"/page", "ExampleBot/1.0", "")
				if resp.StatusCode != 403 || resp.Header.Get(proxy.HeaderReason) != "unreachable" {
					t.Fatalf("request %d: %d %q, want 403 unreachable", i, resp.StatusCode, resp.Header.Get(proxy.HeaderReason))
				}
				line := lastLine(t, h)
				fetched, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["robots_fetched_at"]))
				if err != nil {
					t.Fatalf("robots_fetched_at %v: %v", line["robots_fetched_at"], err)
				}
				fetched = fetched.UTC()
				want := fmt.Sprintf("robotsproxy: robots.txt was fetched at %s; it is fetched again after %s (cache.unreachable_retry 1m30s) or when the configuration is reloaded (SIGHUP), and until then every request to this authority is refused\n",
					fetched.Format(time.RFC3339), fetched.Add(retry).Format(time.RFC3339))
				switch {
				case retry > 0 && !strings.HasSuffix(body, want):
					t.Errorf("request %d: body %q, want it to end with %q", i, body, want)
				case retry == 0 && strings.Contains(body, "fetched again"):
					t.Errorf("request %d without UnreachableRetry: body %q says when it is fetched again", i, body)
				}
			}
		})
	}
}
