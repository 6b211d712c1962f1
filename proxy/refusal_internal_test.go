package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestLongDenialsNotKept: a denial whose body is long (a long rule) is
// answered from a rendering made for it alone, not kept among the
// renderings, which stay small; a short one is kept.
func TestLongDenialsNotKept(t *testing.T) {
	p := New(Options{Policy: policy.New(policy.Options{})})
	for _, tt := range []struct {
		pattern string
		kept    int
	}{
		{"/short", 1},
		{"/" + strings.Repeat("x", 10<<10), 0},
	} {
		p.denials = memo.NewSync[denialKey, *rendered](denialsMax)
		rb := robots.Parse([]byte("User-agent: *\nDisallow: " + tt.pattern + "\n"))
		d := policy.Decision{Reason: auditlog.ReasonRule, Identity: identity.Identity{Token: "ExampleBot"},
			RobotsURL: "http://example.com/robots.txt", Access: policy.Successful, Status: 200,
			Verdict: rb.Test(tt.pattern, "ExampleBot")}
		for range 2 {
			rec := httptest.NewRecorder()
			st := &state{w: &countingWriter{ResponseWriter: rec}}
			p.reject(httptest.NewRequest(http.MethodGet, "http://example.com"+tt.pattern, nil), st, &d)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), tt.pattern) {
				t.Errorf("rule of %d octets: got %d %.80q, want 403 naming the rule", len(tt.pattern), rec.Code, rec.Body.String())
			}
		}
		if got := p.denials.Len(); got != tt.kept {
			t.Errorf("rule of %d octets: %d renderings kept, want %d", len(tt.pattern), got, tt.kept)
		}
	}
}
