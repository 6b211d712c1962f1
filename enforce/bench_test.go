package enforce_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/enforce"
)

// BenchmarkRoundTrip measures an allowed GET (robots.txt cached) to a
// loopback origin, through the crawler's transport alone (base) and
// through enforce.Transport around it (enforce): the difference is what
// the proxy's request path costs in process.
func BenchmarkRoundTrip(b *testing.B) {
	o := newOrigin(b, robotsTxt(200, "User-agent: *\nDisallow: /private/\n"))
	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n"))
	if err != nil {
		b.Fatal(err)
	}
	base := &http.Transport{MaxIdleConnsPerHost: 4}
	tr, err := enforce.New(enforce.Options{Config: cfg, Base: base, Audit: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"base", base}, {"enforce", tr}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("GET", o.URL+"/page", nil)
				req.Header.Set("User-Agent", "BenchBot/1.0")
				resp, err := c.rt.RoundTrip(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
