package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOneAuthorityPerAddress: every spelling of one IP address is one
// authority. A crawler that rotates "[::1]", "[0:0:0:0:0:0:0:1]", "[::0:1]"
// and "[0::1]" (or "[::ffff:127.0.0.1]" for 127.0.0.1) gets one robots.txt
// fetch and one crawl-delay turn, not one per spelling.
func TestOneAuthorityPerAddress(t *testing.T) {
	for _, tc := range []struct {
		network, listen string
		spellings       []string
	}{
		{"tcp6", "[::1]:0", []string{"[::1]", "[0:0:0:0:0:0:0:1]", "[::0:1]", "[0::1]"}},
		{"tcp4", "127.0.0.1:0", []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:FFFF:127.0.0.1]"}},
	} {
		t.Run(tc.network, func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.listen)
			if err != nil {
				t.Skipf("no %s loopback on this machine: %v", tc.network, err)
			}
			var fetches atomic.Int64
			origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					fetches.Add(1)
					fmt.Fprint(w, "User-agent: *\nCrawl-delay: 30\nAllow: /\n")
					return
				}
				fmt.Fprint(w, "origin")
			}))
			origin.Listener = ln
			origin.Start()
			t.Cleanup(origin.Close)
			_, port, _ := net.SplitHostPort(ln.Addr().String())

			p := startProxy(t, "politeness:\n  crawl_delay: enforce\n  on_early: reject\n")
			c := proxyClient(t, p.proxyAddr)
			var statuses []int
			for i, host := range tc.spellings {
				resp := viaProxy(t, c, fmt.Sprintf("http://%s:%s/page%d", host, port, i), "RotatingBot/1.0")
				statuses = append(statuses, resp.StatusCode)
			}
			if statuses[0] != 200 {
				t.Fatalf("first request: got %d, want 200", statuses[0])
			}
			for i, s := range statuses[1:] {
				if s != http.StatusTooManyRequests {
					t.Errorf("%s inside the crawl delay: got %d, want 429 (one turn per address)", tc.spellings[i+1], s)
				}
			}
			if n := fetches.Load(); n != 1 {
				t.Errorf("robots.txt fetched %d times for %d spellings of one address, want 1", n, len(tc.spellings))
			}
			lines := p.auditLines(t, len(tc.spellings))
			want := lines[0]["robots_url"]
			for _, l := range lines {
				if l["robots_url"] != want || strings.Contains(fmt.Sprint(l["robots_url"]), "ffff") {
					t.Errorf("audit robots_url %v, want every line %v", l["robots_url"], want)
				}
			}
		})
	}
}
