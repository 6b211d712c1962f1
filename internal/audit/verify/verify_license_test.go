package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestVerifyLicense re-decides license and license-required lines from
// the archived robots.txt and RSL license: the lines the proxy logs
// verify; a purpose the license permits, another decision, a license
// robots.txt does not name, or a path robots.txt disallows do not; a
// license never read is unverifiable. A license named by a Link header
// field (license_source link) is re-decided from the archived license
// alone: robots.txt need not name it.
func TestVerifyLicense(t *testing.T) {
	const licURL = "http://example.com/license.xml"
	const linkURL = "http://example.com/linked-license.xml" // named by a Link header field, not robots.txt
	const body = "User-agent: *\nDisallow: /private\nLicense: " + licURL + "\n"
	const rsl = `<rsl><content url="/"><license><prohibits type="usage">ai-train</prohibits></license></content>` +
		`<content url="/paid/" server="https://rsl.example/api"/></rsl>`
	const malformed = `<rsl><content url="/">`
	tests := []struct {
		name, path, reason, purposes, licURL, doc, decision, refused string
		want                                                         verify.Kind
		source                                                       string // license_source, "" for none
	}{
		{"prohibited purpose", "/x", "license", `["search","train-ai"]`, licURL, rsl, "prohibited", "train-ai", "", ""},
		{"license server", "/paid/a", "license-required", `["search"]`, licURL, rsl, "license-required", "", "", ""},
		{"malformed license", "/x", "license", `["search"]`, licURL, malformed, "unreadable", "", "", ""},
		{"permitted purpose", "/x", "license", `["search"]`, licURL, rsl, "prohibited", "search", verify.KindDecision, ""},
		{"wrong decision for the reason", "/x", "license-required", `["train-ai"]`, licURL, rsl, "prohibited", "train-ai", verify.KindDecision, ""},
		{"another license", "/x", "license", `["train-ai"]`, "http://example.com/other.xml", rsl, "prohibited", "train-ai", verify.KindDecision, ""},
		{"disallowed path", "/private", "license", `["train-ai"]`, licURL, rsl, "prohibited", "train-ai", verify.KindDecision, ""},
		{"never read", "/x", "license", `["train-ai"]`, licURL, "", "unreadable", "", verify.KindUnverifiable, ""},
		{"source robots.txt", "/x", "license", `["search","train-ai"]`, licURL, rsl, "prohibited", "train-ai", "", "robots.txt"},
		{"link: prohibited purpose", "/x", "license", `["train-ai"]`, linkURL, rsl, "prohibited", "train-ai", "", "link"},
		{"link: license server", "/paid/a", "license-required", `["search"]`, linkURL, rsl, "license-required", "", "", "link"},
		{"link: permitted purpose", "/x", "license", `["search"]`, linkURL, rsl, "prohibited", "search", verify.KindDecision, "link"},
		{"link: disallowed path", "/private", "license", `["train-ai"]`, linkURL, rsl, "prohibited", "train-ai", verify.KindDecision, "link"},
		{"link: never read", "/x", "license", `["train-ai"]`, linkURL, "", "unreadable", "", verify.KindUnverifiable, "link"},
		{"unknown source", "/x", "license", `["train-ai"]`, licURL, rsl, "prohibited", "train-ai", verify.KindDecision, "html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
			a := policy.Access{Result: policy.Successful, URL: "http://example.com/robots.txt", FinalURL: "http://example.com/robots.txt",
				Status: 200, FetchedAt: at, MaxAge: -1,
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
			licFields := `,"license_url":"` + tt.licURL + `","license_decision":"` + tt.decision + `"`
			if tt.refused != "" {
				licFields += `,"license_refused":"` + tt.refused + `"`
			}
			if tt.source != "" {
				licFields += `,"license_source":"` + tt.source + `"`
			}
			if tt.doc != "" {
				sum := sha256.Sum256([]byte(tt.doc))
				la := policy.Access{Result: policy.Successful, URL: tt.licURL, FinalURL: tt.licURL, Status: 200, FetchedAt: at.Add(time.Second),
					MaxAge: -1, Raw: []byte(tt.doc), SHA256: sum}
				if err := ar.Record(la); err != nil {
					t.Fatal(err)
				}
				licFields += `,"license_sha256":"` + hex.EncodeToString(sum[:]) + `"`
			}
			ident := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
			cache := access.NewCache(func(context.Context, string, string) policy.Access { b := a; b.Raw = nil; return b }, access.CacheOptions{})
			pol := policy.New(policy.Options{Identifier: ident, Cache: cache})
			d := pol.Decide(context.Background(), policy.Request{Scheme: "http", Host: "example.com", Path: tt.path, UserAgent: "ExampleBot/1.0"})
			line := auditLine("http://example.com"+tt.path, "ExampleBot/1.0", d, a)
			line = bytes.Replace(line, []byte(`"decision":"`+map[bool]string{true: "allow", false: "deny"}[d.Allowed]+`","reason":"`+string(d.Reason)+`"`),
				[]byte(`"decision":"deny","reason":"`+tt.reason+`","purposes":`+tt.purposes+licFields), 1)
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
