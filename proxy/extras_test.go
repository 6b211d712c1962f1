package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// extrasRobots is a robots.txt whose "*" group has n Content-Signal
// lines: past four, reading the extras of its groups (robots.Extras)
// allocates once.
func extrasRobots(n int) string {
	var b strings.Builder
	b.WriteString("User-agent: *\nAllow: /\n")
	for range n {
		b.WriteString("Content-Signal: search=yes\n")
	}
	return b.String()
}

// requestAllocs returns the allocations of one request through a proxy,
// with politeness or not, to an origin whose robots.txt is body.
func requestAllocs(t *testing.T, body string, polite bool) float64 {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body)
	}))
	defer o.Close()
	tr := proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true})
	tr.RegisterProtocol("http", memRT{body: bytes.Repeat([]byte("x"), 100)})
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	cache := access.NewCache(fetcher.Fetch, access.CacheOptions{})
	u, _ := url.Parse(o.URL)
	scheme, auth, _ := policy.Authority(u.Scheme, u.Host)
	cache.Get(context.Background(), scheme, auth)
	o.Close() // the robots.txt is cached; the pages come from memRT
	popts := policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: cache}
	if polite {
		popts.Politeness = politeness.New(politeness.Options{CrawlDelay: true}).Politeness()
	}
	h := proxy.New(proxy.Options{Policy: policy.New(popts), Transport: tr, Audit: io.Discard})
	return testing.AllocsPerRun(50, func() {
		r := httptest.NewRequest("GET", o.URL+"/page", nil)
		r.Header.Set("User-Agent", benchUA)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d", w.Code)
		}
	})
}

// TestExtrasReadOncePerRequest: a request reads the extras of its
// robots.txt groups once, for its usage preferences and its crawl delay
// alike: a robots.txt whose extras allocate when read costs a request one
// allocation more than one whose extras do not, with politeness reading
// the crawl delay or without.
// raceDetector is set under go test -race (race_on_test.go).
var raceDetector bool

func TestExtrasReadOncePerRequest(t *testing.T) {
	if raceDetector {
		t.Skip("SKIPPED: allocation counts vary under the race detector; go test without -race checks this")
	}
	for _, polite := range []bool{false, true} {
		small := requestAllocs(t, extrasRobots(4), polite)
		large := requestAllocs(t, extrasRobots(5), polite)
		if large-small != 1 {
			t.Errorf("politeness %v: %v allocations per request with 4 Content-Signal lines, %v with 5: the extras are read %v times, want once",
				polite, small, large, large-small)
		}
	}
}
