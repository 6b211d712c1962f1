package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/check"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestOneDecisionTable runs each (access result, path, User-Agent) case
// through the three deciders: the proxy's (Policy.Decide on a stub cache
// that returns the access result), check's (on the same robots.txt, for a
// successful access), and audit verify's re-decision of the line the proxy
// would log; each must equal policy.DecideAccess, the one decision table.
// A change to that table changes all three, or this test fails. The steps
// after it (usage preferences, licenses, politeness) go through the three
// too: see testDecisionSteps.
func TestOneDecisionTable(t *testing.T) {
	t.Run("steps after the access result", testDecisionSteps)
	const body = "User-agent: examplebot\nDisallow: /action/\nAllow: /action/public\n\nUser-agent: *\nDisallow: /private\n"
	const (
		exampleBot = "Mozilla/5.0 (compatible; ExampleBot/1.0)"
		otherBot   = "OtherBot/2.0"
	)
	tests := []struct {
		name   string
		result policy.AccessResult
		status int
		refuse bool // the destination guard refused the fetch
		path   string
		ua     string
		want   policy.Reason
	}{
		{"disallow rule", policy.Successful, 200, false, "/action/x", exampleBot, auditlog.ReasonRule},
		{"allow rule", policy.Successful, 200, false, "/action/public", exampleBot, auditlog.ReasonRule},
		{"no matching rule", policy.Successful, 200, false, "/index.html", exampleBot, auditlog.ReasonNoMatch},
		{"star fallback", policy.Successful, 200, false, "/private/x", otherBot, auditlog.ReasonRule},
		{"dot segments", policy.Successful, 200, false, "/index.html/../action/x", exampleBot, auditlog.ReasonRule},
		{"escaped dots", policy.Successful, 200, false, "/%2e%2e/action/x", exampleBot, auditlog.ReasonRule},
		{"escaped slash", policy.Successful, 200, false, "/a/..%2Faction/x", exampleBot, auditlog.ReasonRule},
		{"empty segment", policy.Successful, 200, false, "//action/x", exampleBot, auditlog.ReasonRule},
		{"parameters", policy.Successful, 200, false, "/action;p/x", exampleBot, auditlog.ReasonRule},
		{"query", policy.Successful, 200, false, "/action/x?a=1", exampleBot, auditlog.ReasonRule},
		{"robots.txt", policy.Successful, 200, false, "/robots.txt", exampleBot, auditlog.ReasonImplicit},
		{"robots.txt and beyond", policy.Successful, 200, false, "/robots.txt/../action/x", exampleBot, auditlog.ReasonRule},
		{"unavailable", policy.Unavailable, 404, false, "/action/x", exampleBot, auditlog.ReasonUnavailable},
		{"unreachable", policy.Unreachable, 500, false, "/index.html", exampleBot, auditlog.ReasonUnreachable},
		{"destination refused", policy.Unreachable, 0, true, "/index.html", exampleBot, auditlog.ReasonDestination},
	}
	robotsFile := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(robotsFile, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ident := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	fetchedAt := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := policy.Access{Result: tt.result, URL: "http://example.com/robots.txt", FinalURL: "http://example.com/robots.txt",
				Status: tt.status, Refused: tt.refuse, FetchedAt: fetchedAt, MaxAge: -1}
			if tt.result == policy.Successful {
				a.Raw, a.SHA256, a.Robots = []byte(body), sha256.Sum256([]byte(body)), robots.Parse([]byte(body))
				a.Header = http.Header{"Content-Type": {"text/plain"}}
			}
			id := ident.Identify(tt.ua)
			want := policy.DecideAccess(&a, tt.path, id.Candidates)
			if want.Reason != tt.want {
				t.Fatalf("DecideAccess(%s, %q, %q): got reason %s, want %s", tt.result, tt.path, id.Candidates, want.Reason, tt.want)
			}

			// The proxy's decider, on a cache whose fetch returns a.
			dir := t.TempDir()
			ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: filepath.Join(dir, "archive"), ParseLimit: 512 << 10, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			cache := access.NewCache(func(context.Context, string, string) policy.Access {
				if err := ar.Record(a); err != nil {
					t.Error(err)
				}
				b := a
				b.Raw = nil
				return b
			}, access.CacheOptions{})
			pol := policy.New(policy.Options{Identifier: ident, Cache: cache})
			d := pol.Decide(context.Background(), policy.Request{Scheme: "http", Host: "example.com", Path: tt.path, UserAgent: tt.ua})
			if d.Allowed != want.Allowed || d.Reason != want.Reason || d.Verdict != want.Verdict || d.ResolvedPath != want.ResolvedPath {
				t.Errorf("Policy.Decide: got %v %s %+v %q, want %v %s %+v %q", d.Allowed, d.Reason, d.Verdict, d.ResolvedPath,
					want.Allowed, want.Reason, want.Verdict, want.ResolvedPath)
			}

			// check's, on the same file (check decides a successful access).
			if tt.result == policy.Successful {
				var out bytes.Buffer
				if _, err := check.Run(robotsFile, tt.ua, []string{"http://example.com" + tt.path}, check.Options{JSON: true, Stdout: &out}); err != nil {
					t.Fatal(err)
				}
				var res check.Result
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					t.Fatal(err)
				}
				var wantRule *check.Rule
				if r := want.Rule(); r != nil {
					wantRule = &check.Rule{Text: r.Text(), Line: r.Line, Allow: r.Allow}
				}
				if res.Allowed != want.Allowed || res.Group != want.Verdict.Agent || fmtRule(res.Rule) != fmtRule(wantRule) {
					t.Errorf("check: got %s, want allowed %v, group %q, rule %s", out.String(), want.Allowed, want.Verdict.Agent, fmtRule(wantRule))
				}
			}

			// audit verify's, on the line the proxy logs for d.
			log := filepath.Join(dir, "audit.log")
			out, prev, err := audit.OpenFile(audit.FileOptions{Path: log})
			if err != nil {
				t.Fatal(err)
			}
			w := audit.NewWriter(out, audit.Options{Chain: true, Prev: prev})
			if _, err := w.Write(auditLine("http://example.com"+tt.path, tt.ua, d, a)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			res, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: filepath.Join(dir, "archive"), Genesis: true,
				Report: func(p verify.Problem) { t.Errorf("audit verify: %s", p) }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Decisions != 1 || res.Verified != 1 {
				t.Errorf("audit verify: got %d decisions, %d verified, want 1, 1", res.Decisions, res.Verified)
			}
		})
	}
}

func fmtRule(r *check.Rule) string {
	if r == nil {
		return "none"
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// TestVerifyUsagePreference re-decides usage-preference lines: the line
// the proxy logs for a refused purpose verifies; one naming a purpose the
// file does not refuse, or a path robots.txt disallows, does not.
func TestVerifyUsagePreference(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n"
	tests := []struct {
		name, path, purposes, refused string
		want                          verify.Kind
	}{
		{"refused purpose", "/x", `["search","train-ai"]`, "train-ai", ""},
		{"purpose the path allows", "/open/x", `["train-ai"]`, "train-ai", verify.KindDecision},
		{"another purpose", "/x", `["search","train-ai"]`, "search", verify.KindDecision},
		{"disallowed path", "/private", `["train-ai"]`, "train-ai", verify.KindDecision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := policy.Access{Result: policy.Successful, URL: "http://example.com/robots.txt", FinalURL: "http://example.com/robots.txt",
				Status: 200, FetchedAt: time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC), MaxAge: -1,
				Raw: []byte(body), SHA256: sha256.Sum256([]byte(body)), Robots: robots.Parse([]byte(body)),
				Header: http.Header{"Content-Type": {"text/plain"}}}
			dir := t.TempDir()
			ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: filepath.Join(dir, "archive"), ParseLimit: 512 << 10, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			if err := ar.Record(a); err != nil {
				t.Fatal(err)
			}
			ident := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
			cache := access.NewCache(func(context.Context, string, string) policy.Access { b := a; b.Raw = nil; return b }, access.CacheOptions{})
			pol := policy.New(policy.Options{Identifier: ident, Cache: cache})
			d := pol.Decide(context.Background(), policy.Request{Scheme: "http", Host: "example.com", Path: tt.path, UserAgent: "ExampleBot/1.0"})
			// As the proxy logs a usage refusal: reason usage-preference,
			// the purposes declared and the one refused.
			line := auditLine("http://example.com"+tt.path, "ExampleBot/1.0", d, a)
			line = bytes.Replace(line, []byte(`"decision":"`+map[bool]string{true: "allow", false: "deny"}[d.Allowed]+`","reason":"`+string(d.Reason)+`"`),
				[]byte(`"decision":"deny","reason":"usage-preference","purposes":`+tt.purposes+`,"usage_refused":"`+tt.refused+`"`), 1)
			log := filepath.Join(dir, "audit.log")
			out, prev, err := audit.OpenFile(audit.FileOptions{Path: log})
			if err != nil {
				t.Fatal(err)
			}
			w := audit.NewWriter(out, audit.Options{Chain: true, Prev: prev})
			if _, err := w.Write(line); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var got []verify.Kind
			res, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: filepath.Join(dir, "archive"), Genesis: true,
				Report: func(p verify.Problem) { got = append(got, p.Kind); t.Log(p) }})
			if err != nil {
				t.Fatal(err)
			}
			var want []verify.Kind
			if tt.want != "" {
				want = []verify.Kind{tt.want}
			}
			if !slices.Equal(got, want) || res.Decisions != 1 {
				t.Errorf("line %s: got problems %v (%d decisions), want %v (1 decision)", line, got, res.Decisions, want)
			}
		})
	}
}
