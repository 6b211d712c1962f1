package proxy

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// BenchmarkAuditLine measures encoding one allowed request's audit line
// (the line is discarded: see BenchmarkThroughput for the write).
func BenchmarkAuditLine(b *testing.B) {
	p := New(Options{Policy: policy.New(policy.Options{}), Audit: io.Discard})
	r := httptest.NewRequest("GET", "http://example.com/size/100", nil)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)")
	rb := robots.Parse([]byte("User-agent: ExampleBot\nDisallow: /nope/\n"))
	st := &state{start: time.Now(), target: "http://example.com/size/100", decided: true}
	st.decision = policy.Decision{Allowed: true, Reason: auditlog.ReasonNoMatch,
		Identity: identity.Identity{Token: "ExampleBot", Source: policy.SourceUserAgent, Candidates: []string{"ExampleBot"}},
		Verdict:  rb.Test("/size/100", "ExampleBot"), RobotsURL: "http://example.com/robots.txt",
		Access: policy.Successful, Status: http.StatusOK, Cache: policy.CacheHit,
		RobotsSHA256: sha256.Sum256([]byte("x")), RobotsFetchedAt: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.audit(&st.line.sink, r, st, 200, 100)
	}
}
