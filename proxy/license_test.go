package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// rslOrigin serves a robots.txt with a License line, the RSL license it
// names (status licenseStatus) and pages; a page under /linked/ names a
// license in a Link header field.
func rslOrigin(t *testing.T, licenseStatus int) *httptest.Server {
	t.Helper()
	const rsl = `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits><prohibits type="usage">ai-train</prohibits></license></content>
  <content url="/paid/" server="https://rsl.example/api"><license><permits type="usage">all</permits></license></content>
</rsl>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\nLicense: http://" + r.Host + "/license.xml\n"))
		case "/license.xml":
			w.WriteHeader(licenseStatus)
			w.Write([]byte(rsl))
		default:
			if r.URL.Path == "/linked/" {
				w.Header().Set("Link", `</other-license.xml>; rel="license"; type="application/rsl+xml"`)
			}
			w.Write([]byte("page"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func licenseHarness(t *testing.T, enforce bool, mode policy.Mode) *harness {
	t.Helper()
	decl := policy.NewDeclarations(map[string][]string{"TrainBot": {"train-ai"}, "SearchBot": {"search", "ai-input"}})
	src := license.NewSource(license.SourceOptions{
		Fetcher: access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}}),
	})
	return newHarness(t, harnessOptions{
		policy: func(o *policy.Options) {
			o.Mode = mode
			o.Usage = policy.UsageOptions{Enforce: enforce, Declarations: decl, Licenses: src}
		},
	})
}

func TestLicense(t *testing.T) {
	tests := []struct {
		name          string
		licenseStatus int
		enforce       bool
		mode          policy.Mode
		ua, path      string
		wantStatus    int
		wantLine      map[string]any
	}{
		{"prohibited, enforced", 200, true, "", "TrainBot/1.0", "/doc", 403,
			map[string]any{"decision": "deny", "reason": "license", "enforced": true, "license_decision": "prohibited",
				"license_refused": "train-ai", "license_element": `<content url="/">`}},
		{"prohibited, report mode", 200, true, policy.ModeReport, "TrainBot/1.0", "/doc", 200,
			map[string]any{"decision": "deny", "reason": "license", "enforced": false, "license_decision": "prohibited"}},
		{"prohibited, not enforced", 200, false, "", "TrainBot/1.0", "/doc", 200,
			map[string]any{"decision": "allow", "reason": "rule", "license_decision": "prohibited", "license_refused": "train-ai"}},
		{"permitted", 200, true, "", "SearchBot/1.0", "/doc", 200,
			map[string]any{"decision": "allow", "reason": "rule", "license_decision": "permitted", "license_refused": nil}},
		{"license server, enforced", 200, true, "", "SearchBot/1.0", "/paid/x", 403,
			map[string]any{"decision": "deny", "reason": "license-required", "license_decision": "license-required",
				"license_element": `<content url="/paid/" server="https://rsl.example/api">`}},
		{"license server, report mode", 200, true, policy.ModeReport, "SearchBot/1.0", "/paid/x", 200,
			map[string]any{"decision": "deny", "reason": "license-required", "enforced": false}},
		{"license server, not enforced", 200, false, "", "SearchBot/1.0", "/paid/x", 200,
			map[string]any{"decision": "allow", "license_decision": "license-required"}},
		{"missing license", 404, true, "", "TrainBot/1.0", "/doc", 200,
			map[string]any{"decision": "allow", "license_decision": "unavailable", "license_sha256": nil}},
		{"unreachable license fails closed", 503, true, "", "SearchBot/1.0", "/doc", 403,
			map[string]any{"decision": "deny", "reason": "license", "license_decision": "unreadable", "license_error": "license http://HOST/license.xml is unreachable (status 503)"}},
		{"unreachable license, not enforced", 503, false, "", "SearchBot/1.0", "/doc", 200,
			map[string]any{"decision": "allow", "license_decision": "unreadable"}},
		{"no purpose declared: not read", 200, true, "", "OtherBot/1.0", "/doc", 200,
			map[string]any{"decision": "allow", "license_url": nil, "license_decision": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := rslOrigin(t, tt.licenseStatus)
			h := licenseHarness(t, tt.enforce, tt.mode)
			resp, body := h.do(t, "GET", o.URL+tt.path, tt.ua, "")
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			host := o.Listener.Addr().String()
			if e, ok := tt.wantLine["license_error"].(string); ok {
				tt.wantLine["license_error"] = replaceHost(e, host)
			}
			l := lastLine(t, h)
			assertFields(t, l, tt.wantLine)
			if tt.wantLine["license_decision"] != nil && l["license_url"] != "http://"+host+"/license.xml" {
				t.Errorf("license_url %v", l["license_url"])
			}
			if tt.licenseStatus == 200 && tt.wantLine["license_decision"] != nil {
				if s, _ := l["license_sha256"].(string); len(s) != 64 || l["license_fetched_at"] == nil {
					t.Errorf("license_sha256 %v, license_fetched_at %v", l["license_sha256"], l["license_fetched_at"])
				}
			}
			if tt.wantStatus == 403 {
				if got := resp.Header.Get(proxy.HeaderReason); got != tt.wantLine["reason"] {
					t.Errorf("%s: %q", proxy.HeaderReason, got)
				}
				if got := resp.Header.Get(proxy.HeaderRule); got == "" {
					t.Errorf("%s empty", proxy.HeaderRule)
				}
			}
		})
	}
}

func replaceHost(s, host string) string {
	const ph = "HOST"
	for i := 0; i+len(ph) <= len(s); i++ {
		if s[i:i+len(ph)] == ph {
			return s[:i] + host + s[i+len(ph):]
		}
	}
	return s
}

// TestLicenseLink: a Link header naming a license is recorded, never
// decides the request it answers.
func TestLicenseLink(t *testing.T) {
	o := rslOrigin(t, 200)
	h := licenseHarness(t, true, "")
	if resp, _ := h.do(t, "GET", o.URL+"/linked/", "SearchBot/1.0", ""); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	assertFields(t, lastLine(t, h), map[string]any{"decision": "allow",
		"license_link": o.URL + "/other-license.xml", "license_decision": "permitted"})
}
