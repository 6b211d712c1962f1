package enforce_test

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/server"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestSameAsProxy sends the same requests to the proxy (the handler that
// serve runs, assembled by server.New) and through enforce.Transport, each
// with its own cache, and requires the same answers and the same audit
// lines, field for field, but for the times (time, duration_ms,
// robots_fetched_at, retry_after_ms), the chain's prev and the client's
// address (the proxy's client has one, the in-process one none). Crawl
// delay with on_early reject makes the later requests to a site 429s.
func TestSameAsProxy(t *testing.T) {
	o := newOrigin(t, robotsTxt(200, "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"))
	unreachable := newOrigin(t, robotsTxt(503, ""))
	urls := []string{o.URL + "/a", o.URL + "/private/b", o.URL + "/a?q=1", o.URL + "/private/%2e%2e/c", unreachable.URL + "/x"}
	for _, mode := range []string{"enforce", "report"} {
		t.Run(mode, func(t *testing.T) {
			yaml := "allow_private: true\nmode: " + mode + "\npoliteness:\n  crawl_delay: enforce\n  on_early: reject\n"
			cfg, err := config.Load(strings.NewReader(yaml))
			if err != nil {
				t.Fatal(err)
			}
			proxied := &testkit.AuditSink{}
			srv, err := server.New(cfg, proxied, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tr, _, inProcess := newTransport(t, "mode: "+mode+"\npoliteness:\n  crawl_delay: enforce\n  on_early: reject\n")
			for _, u := range urls {
				req := httptest.NewRequest("GET", u, nil) // absolute form, as a client sends it to a proxy
				req.Header.Set("User-Agent", "TestBot/2.1")
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, req)
				creq := mustRequest(t, "GET", u, nil)
				creq.Header.Set("User-Agent", "TestBot/2.1")
				resp, err := tr.RoundTrip(creq)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				// A 429's text names the seconds left, which differ by the
				// time between the two requests.
				sameBody := string(body) == rec.Body.String() || rec.Code == http.StatusTooManyRequests
				ph := rec.Result().Header
				for _, h := range []http.Header{resp.Header, ph} {
					h.Del("Retry-After") // the seconds left, as the text
					h.Del("Date")        // the origin's, a second apart
				}
				if resp.StatusCode != rec.Code || !sameBody || !maps.EqualFunc(resp.Header, ph, slices.Equal) {
					t.Errorf("%s: in process %d %q %v, through the proxy %d %q %v", u, resp.StatusCode, body, resp.Header, rec.Code, rec.Body.String(), ph)
				}
			}
			want, got := proxied.Lines(t), inProcess.Lines(t)
			if len(got) != len(urls) || len(want) != len(urls) {
				t.Fatalf("%d lines in process, %d through the proxy, want %d each", len(got), len(want), len(urls))
			}
			for i := range want {
				for _, k := range []string{"time", "duration_ms", "prev", "client", "robots_fetched_at", "retry_after_ms"} {
					delete(want[i], k)
					delete(got[i], k)
				}
				if !maps.EqualFunc(want[i], got[i], func(a, b any) bool { return jsonEqual(a, b) }) {
					t.Errorf("%s:\nin process    %v\nthrough proxy %v\nkeys %v / %v", urls[i], got[i], want[i],
						slices.Sorted(maps.Keys(got[i])), slices.Sorted(maps.Keys(want[i])))
				}
			}
		})
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok || bok {
		return aok && bok && slices.EqualFunc(as, bs, jsonEqual)
	}
	return a == b
}
