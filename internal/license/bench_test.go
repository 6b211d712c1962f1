package license_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// BenchmarkCheck is the per-request cost of a license for a request with
// declared purposes once the license is cached: the License line lookup,
// the cache hit, the content match and the decision.
func BenchmarkCheck(b *testing.B) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(siteLicense))
	}))
	defer origin.Close()
	src := newSource(0, nil)
	r := robots.Parse([]byte("User-agent: *\nDisallow: /private\nLicense: " + origin.URL + "/license.xml\n"))
	ctx := context.Background()
	purposes := []string{"search", "ai-input"}
	if l := src.Check(ctx, r, "example.com", "/docs/a.pdf", purposes); l == nil {
		b.Fatal("no license")
	}
	b.ReportAllocs()
	for b.Loop() {
		src.Check(ctx, r, "example.com", "/docs/a.pdf", purposes)
	}
}
